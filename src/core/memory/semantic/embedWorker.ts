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
  tensor1d(values: number[], dtype: 'int32'): Tensor;
  tensor2d(values: number[], shape: [number, number], dtype: 'int32'): Tensor;
};

interface Tensor {
  shape: number[];
  dataSync(): Float32Array | Int32Array;
  dispose(): void;
}

/** The parts of TensorFlow.js's GraphModel used here (its executor is not in its declarations). */
interface Graph {
  execute(inputs: Record<string, Tensor>): Tensor;
  executeAsync(inputs: Record<string, Tensor>): Promise<Tensor>;
  executor?: { weightMap?: Record<string, Tensor[] | undefined>; graph?: { nodes?: Record<string, unknown> } };
}

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
  | { id: 0; ready: true; loadMs: number; planned: boolean }
  | { id: 0; ready: false; error: string };

/**
 * Texts per forward pass. The model's cost per text grows with the batch beyond a handful
 * (measured on this model: 8 texts a pass embed about twice as fast as 64), and one pass's
 * activations are what its wasm memory grows to (the process's peak with 1,200-character texts:
 * 229 MB at 8 a pass, 201 MB at 2, no slower), so bulk work is fed to it in passes of two.
 */
export const PASS = 2;

/**
 * The model's graph has two dynamic steps (TensorFlow's `Where`: which tokens fit the model's
 * 128, and where the real tokens sit in the padded batch), which make TensorFlow.js run it with
 * `executeAsync`, re-planning the graph and awaiting every node. Both steps only depend on the
 * token ids, so they are computed here and fed in at the nodes just after them, and the rest runs
 * with `execute`, whose plan is made once: about a sixth less work a query. Used only after a
 * check at load gives the same bits as `executeAsync` for sample texts; otherwise (another
 * graph) every text goes through `executeAsync`.
 */
const K = 'module_apply_default/Encoder_en/KonaTransformer/';
const FED = {
  kept: `${K}ClipToMaxLength/Reshape`,
  tokens: `${K}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32`,
  positions: `${K}Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2`,
};
const MAX_LENGTH = `${K}ClipToMaxLength/Less/y`;
const PADDING = `${K}Encode/SparseToDense/default_value`;
/** The load check's texts: a short one and one in a batch of two (their padding differs). */
const CHECK = [['recollect'], ['a longer sentence, with punctuation, to check the padded batch', 'two']];

interface Runner {
  embed(texts: string[]): Promise<{ dims: number; vectors: Float32Array }>;
  /** Whether the graph runs with `execute` (memory_status does not show it; the bench prints it). */
  planned: boolean;
}

/**
 * The bundled embedding model's thread (bundled as dist/embedWorker.js). Everything it reads
 * is a local file: the weights by path through TensorFlow.js's file-system loader, the
 * vocabulary with fs, the wasm backend from `wasmDir`, so it never reaches the network.
 */
async function load(data: EmbedWorkerData): Promise<Runner> {
  tf.setWasmPaths(data.wasmDir.endsWith(path.sep) ? data.wasmDir : data.wasmDir + path.sep);
  await tf.setBackend('wasm');
  await tf.ready();
  const graph = (await tf.loadGraphModel(tf.io.fileSystem(path.join(data.modelDir, 'model.json')))) as unknown as Graph;
  const vocabulary = JSON.parse(fs.readFileSync(path.join(data.modelDir, 'vocab.json'), 'utf8')) as [string, number][];
  const { tokenizer } = new EmbeddingsModel({ model: graph as unknown as EmbeddingsModelData['model'], vocabulary });
  const encode = (texts: string[]) => texts.map((t) => tokenizer.encode(t));
  const viaAsync = (texts: string[]) => runAsync(graph, encode(texts));
  const planned = plannedRunner(graph);
  // The check doubles as the warm-up: the first query after an open does not pay for it.
  let same = planned !== undefined;
  for (const texts of CHECK) {
    const want = await viaAsync(texts);
    if (planned && !sameBits(planned(encode(texts)), want)) same = false;
  }
  if (same && planned) return { planned: true, embed: (texts) => passes(texts, (t) => Promise.resolve(planned(encode(t)))) };
  return { planned: false, embed: (texts) => passes(texts, viaAsync) };
}

/** `texts` in passes of PASS, back to back in one array. */
async function passes(texts: string[], run: (texts: string[]) => Promise<{ dims: number; vectors: Float32Array }>): Promise<{ dims: number; vectors: Float32Array }> {
  let out: Float32Array | undefined;
  let dims = 0;
  for (let i = 0; i < texts.length; i += PASS) {
    const part = await run(texts.slice(i, i + PASS));
    if (!out) {
      dims = part.dims;
      out = new Float32Array(texts.length * dims);
    }
    out.set(part.vectors, i * dims);
  }
  return { dims, vectors: out ?? new Float32Array(0) };
}

/** The model's two inputs: each token's (text, position) and its id. */
function sparse(encoded: number[][]): { at: number[]; ids: number[] } {
  const at: number[] = [];
  const ids: number[] = [];
  encoded.forEach((tokens, i) => tokens.forEach((id, j) => (at.push(i, j), ids.push(id))));
  return { at, ids };
}

async function runAsync(graph: Graph, encoded: number[][]): Promise<{ dims: number; vectors: Float32Array }> {
  const { at, ids } = sparse(encoded);
  const inputs = { indices: tf.tensor2d(at, [ids.length, 2], 'int32'), values: tf.tensor1d(ids, 'int32') };
  try {
    return rows(await graph.executeAsync(inputs));
  } finally {
    inputs.indices.dispose();
    inputs.values.dispose();
  }
}

/** The graph run by `execute`, its dynamic steps computed here; undefined when the graph is not the one expected. */
function plannedRunner(graph: Graph): ((encoded: number[][]) => { dims: number; vectors: Float32Array }) | undefined {
  const weights = graph.executor?.weightMap;
  const nodes = graph.executor?.graph?.nodes;
  const maxLength = weights?.[MAX_LENGTH]?.[0]?.dataSync()[0];
  const padding = weights?.[PADDING]?.[0]?.dataSync()[0];
  if (maxLength === undefined || padding === undefined || !nodes || !Object.values(FED).every((n) => n in nodes)) return undefined;
  return (encoded) => {
    const { at, ids } = sparse(encoded);
    // ClipToMaxLength: the tokens at a position under the model's maximum, in input order.
    const kept: number[] = [];
    for (let r = 0; r < ids.length; r++) if ((at[2 * r + 1] as number) < maxLength) kept.push(r);
    // The padded batch is as wide as its longest kept text; a real token is one whose id is above the padding.
    let texts = 0;
    let width = 0;
    for (const r of kept) {
      texts = Math.max(texts, (at[2 * r] as number) + 1);
      width = Math.max(width, (at[2 * r + 1] as number) + 1);
    }
    const dense = new Array<number>(texts * width).fill(padding);
    for (const r of kept) dense[(at[2 * r] as number) * width + (at[2 * r + 1] as number)] = ids[r] as number;
    const tokens: number[] = [];
    const positions: number[] = [];
    for (let i = 0; i < texts; i++) {
      for (let j = 0; j < width; j++) {
        if ((dense[i * width + j] as number) > padding) {
          tokens.push(i, j);
          positions.push(j);
        }
      }
    }
    const inputs = {
      indices: tf.tensor2d(at, [ids.length, 2], 'int32'),
      values: tf.tensor1d(ids, 'int32'),
      [FED.kept]: tf.tensor1d(kept, 'int32'),
      [FED.tokens]: tf.tensor2d(tokens, [positions.length, 2], 'int32'),
      [FED.positions]: tf.tensor1d(positions, 'int32'),
    };
    try {
      return rows(graph.execute(inputs));
    } finally {
      for (const t of Object.values(inputs)) t.dispose();
    }
  };
}

function rows(out: Tensor): { dims: number; vectors: Float32Array } {
  try {
    return { dims: out.shape[1] ?? 0, vectors: Float32Array.from(out.dataSync()) };
  } finally {
    out.dispose();
  }
}

function sameBits(a: { vectors: Float32Array }, b: { vectors: Float32Array }): boolean {
  const x = new Uint32Array(a.vectors.buffer, a.vectors.byteOffset, a.vectors.length);
  const y = new Uint32Array(b.vectors.buffer, b.vectors.byteOffset, b.vectors.length);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

const port = parentPort;
if (port) {
  const started = performance.now();
  const loading = load(workerData as EmbedWorkerData);
  loading.then(
    (runner) => port.postMessage({ id: 0, ready: true, loadMs: Math.round(performance.now() - started), planned: runner.planned } satisfies EmbedReply),
    (err: unknown) => port.postMessage({ id: 0, ready: false, error: err instanceof Error ? err.message : String(err) } satisfies EmbedReply),
  );
  // One request at a time, in the order the owner sends them (it orders queries first).
  let queue = Promise.resolve();
  port.on('message', (req: EmbedRequest) => {
    queue = queue.then(async () => {
      try {
        const runner = await loading;
        const { dims, vectors } = await runner.embed(req.texts);
        port.postMessage({ id: req.id, ok: true, dims, vectors } satisfies EmbedReply, [vectors.buffer as ArrayBuffer]);
      } catch (err) {
        port.postMessage({ id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies EmbedReply);
      }
    });
  });
}
