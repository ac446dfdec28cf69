import * as fs from 'node:fs';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import * as core from '@energetic-ai/core';
import { EmbeddingsModel, type EmbeddingsModelData } from '@energetic-ai/embeddings';

/**
 * The part of TensorFlow.js used here. @energetic-ai/core re-exports it from packages it
 * bundles but whose type declarations it does not ship, so the names are typed here.
 */
const tf = core as unknown as {
  io: typeof core.io;
  setWasmPaths(prefix: string): void;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  loadGraphModel(handler: unknown): Promise<EmbeddingsModelData['model']>;
};

/** What localModel.ts starts the worker with. */
export interface EmbedWorkerData {
  /** model.json, its weight shards and vocab.json. */
  modelDir: string;
  /** The TensorFlow.js wasm backend's binaries. */
  wasmDir: string;
}

export type EmbedRequest = { id: number; texts: string[] };
export type EmbedReply =
  | { id: number; ok: true; dims: number; vectors: Float32Array }
  | { id: number; ok: false; error: string }
  | { id: 0; ready: true; loadMs: number }
  | { id: 0; ready: false; error: string };

/**
 * Texts per forward pass. The model's cost per text grows with the batch beyond a handful
 * (measured on this model: 8 texts a pass embed about twice as fast as 64), and one pass's
 * activations are what its wasm memory grows to (the process's peak with 1,200-character texts:
 * 229 MB at 8 a pass, 201 MB at 2, no slower), so bulk work is fed to it in passes of two.
 */
const PASS = 2;

/**
 * The bundled embedding model's thread (bundled as dist/embedWorker.js). Everything it reads
 * is a local file: the weights by path through TensorFlow.js's file-system loader, the
 * vocabulary with fs, the wasm backend from `wasmDir`, so it never reaches the network.
 */
async function load(data: EmbedWorkerData): Promise<EmbeddingsModel> {
  tf.setWasmPaths(data.wasmDir.endsWith(path.sep) ? data.wasmDir : data.wasmDir + path.sep);
  await tf.setBackend('wasm');
  await tf.ready();
  const model = await tf.loadGraphModel(tf.io.fileSystem(path.join(data.modelDir, 'model.json')));
  const vocabulary = JSON.parse(fs.readFileSync(path.join(data.modelDir, 'vocab.json'), 'utf8')) as [string, number][];
  return new EmbeddingsModel({ model, vocabulary });
}

async function embedAll(model: EmbeddingsModel, texts: string[]): Promise<{ dims: number; vectors: Float32Array }> {
  let out: Float32Array | undefined;
  let dims = 0;
  for (let i = 0; i < texts.length; i += PASS) {
    const rows = await model.embed(texts.slice(i, i + PASS));
    for (const [j, row] of rows.entries()) {
      if (!out) {
        dims = row.length;
        out = new Float32Array(texts.length * dims);
      }
      out.set(row, (i + j) * dims);
    }
  }
  return { dims, vectors: out ?? new Float32Array(0) };
}

const port = parentPort;
if (port) {
  const started = performance.now();
  const loading = load(workerData as EmbedWorkerData);
  loading.then(
    () => port.postMessage({ id: 0, ready: true, loadMs: Math.round(performance.now() - started) } satisfies EmbedReply),
    (err: unknown) => port.postMessage({ id: 0, ready: false, error: err instanceof Error ? err.message : String(err) } satisfies EmbedReply),
  );
  // One request at a time, in the order the owner sends them (it orders queries first).
  let queue = Promise.resolve();
  port.on('message', (req: EmbedRequest) => {
    queue = queue.then(async () => {
      try {
        const model = await loading;
        const { dims, vectors } = await embedAll(model, req.texts);
        port.postMessage({ id: req.id, ok: true, dims, vectors } satisfies EmbedReply, [vectors.buffer as ArrayBuffer]);
      } catch (err) {
        port.postMessage({ id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies EmbedReply);
      }
    });
  });
}
