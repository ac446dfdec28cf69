import { parentPort, workerData } from 'node:worker_threads';
import { UseLiteModel } from './useLiteModel';

/** What localModel.ts starts the worker with. */
export interface EmbedWorkerData {
  /** model.json, its weight shards and vocab.json. */
  modelDir: string;
}

export type EmbedRequest = { id: number; texts: string[] };
export type EmbedReply =
  | { id: number; ok: true; dims: number; vectors: Float32Array }
  | { id: number; ok: false; error: string }
  | { id: 0; ready: true; loadMs: number; simd: boolean }
  | { id: 0; ready: false; error: string };

/**
 * The bundled embedding model's thread (bundled as dist/embedWorker.js). Everything it reads is
 * a local file under `modelDir`, so it never reaches the network.
 */
function main(data: EmbedWorkerData): void {
  const port = parentPort;
  if (!port) return;
  const started = performance.now();
  let model: UseLiteModel;
  try {
    model = UseLiteModel.load(data.modelDir);
  } catch (err) {
    port.postMessage({ id: 0, ready: false, error: (err as Error).message } satisfies EmbedReply);
    return;
  }
  port.postMessage({ id: 0, ready: true, loadMs: Math.round(performance.now() - started), simd: model.simd } satisfies EmbedReply);
  port.on('message', (msg: EmbedRequest) => {
    try {
      const vectors = new Float32Array(msg.texts.length * model.dims);
      msg.texts.forEach((t, i) => vectors.set(model.embed(t), i * model.dims));
      port.postMessage({ id: msg.id, ok: true, dims: model.dims, vectors } satisfies EmbedReply, [vectors.buffer]);
    } catch (err) {
      port.postMessage({ id: msg.id, ok: false, error: (err as Error).message } satisfies EmbedReply);
    }
  });
}

main(workerData as EmbedWorkerData);
