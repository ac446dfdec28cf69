import * as fs from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

/** One chunk for the worker: where its compressed bytes are, their hash and its size once decompressed. */
export interface ChunkJob {
  index: number;
  at: number;
  length: number;
  hash: Uint8Array;
  raw: number;
}

/** What the worker reports per chunk, in the order it was asked: the bytes, or why the chunk is unusable. */
export type ChunkResult = { index: number; bytes: ArrayBuffer } | { index: number; error: string };

/** Who decompresses a chunk, in a slot per chunk shared with the worker: nobody yet, the worker, the worker has posted it, this thread. */
const TODO = 0;
const BUSY = 1;
const POSTED = 2;
const MAIN = 3;
/** How long a query waits for a chunk the worker is on before doing it itself (a worker that died never posts it). */
const WAIT_LIMIT_MS = 2000;

/**
 * The worker's whole program. Plain CommonJS in a string, so no bundler or test runner has to
 * know about a second entry point. The descriptor stays the main thread's (Node warns when a
 * worker closes one it did not open); it is closed there once the worker is done with it.
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const { brotliDecompressSync } = require('node:zlib');
const { fd, list, hashes, stop, claims, port } = workerData;
const stopped = new Int32Array(stop);
// postMessage has queued the result before this: a main thread woken here finds it on the port.
const claimed = new Int32Array(claims);
const posted = (index) => { Atomics.store(claimed, index, ${POSTED}); Atomics.notify(claimed, index); };
try {
  for (let k = 0; k < list.length / 4; k++) {
    const job = { index: list[4 * k], at: list[4 * k + 1], length: list[4 * k + 2], raw: list[4 * k + 3], hash: hashes.subarray(32 * k, 32 * k + 32) };
    if (Atomics.load(stopped, 0) !== 0) break;
    // A chunk the main thread claimed is being decompressed there: skipped, never done twice.
    if (Atomics.compareExchange(claimed, job.index, ${TODO}, ${BUSY}) !== ${TODO}) continue;
    try {
      const payload = Buffer.allocUnsafe(job.length);
      for (let done = 0; done < job.length; ) {
        const n = fs.readSync(fd, payload, done, job.length - done, job.at + done);
        if (n === 0) throw new Error('the file ends at byte ' + (job.at + done) + ', ' + (job.length - done) + ' bytes short of a chunk');
        done += n;
      }
      if (!createHash('sha256').update(payload).digest().equals(Buffer.from(job.hash))) throw new Error('the checksum does not match (chunk ' + job.index + ')');
      const out = brotliDecompressSync(payload, { chunkSize: Math.max(64, job.raw), maxOutputLength: Math.max(1, job.raw) });
      if (out.length !== job.raw) throw new Error('chunk ' + job.index + ' decompressed to ' + out.length + ' bytes, the frame says ' + job.raw);
      const bytes = out.byteOffset === 0 && out.buffer.byteLength === out.length ? out.buffer : out.buffer.slice(out.byteOffset, out.byteOffset + out.length);
      port.postMessage({ index: job.index, bytes }, [bytes]);
      posted(job.index);
    } catch (err) {
      port.postMessage({ index: job.index, error: err instanceof Error ? err.message : String(err) });
      posted(job.index);
      break;
    }
  }
} finally {
  port.postMessage({ done: true });
}
`;

/**
 * The jobs as two flat arrays (index, position, length, size; then the hashes back to back): an
 * object per chunk made the open's main thread spend ~3 ms cloning them for the worker.
 */
function packJobs(jobs: readonly ChunkJob[]): { list: Float64Array; hashes: Uint8Array } {
  const list = new Float64Array(4 * jobs.length);
  const hashes = new Uint8Array(32 * jobs.length);
  jobs.forEach((j, k) => {
    list.set([j.index, j.at, j.length, j.raw], 4 * k);
    hashes.set(j.hash.subarray(0, 32), 32 * k);
  });
  return { list, hashes };
}

/**
 * Reads and decompresses a list of snapshot chunks in a worker thread. Unlike requests to the
 * thread pool, which the main thread must pick up and renew one event-loop turn at a time, the
 * worker keeps going while the main thread is busy (a burst of tool calls, an import right after
 * the open), and what it finished can be taken synchronously (`drain`) by a query that needs a
 * chunk, without waiting for the event loop. Every result is also delivered as an event.
 */
export class ChunkReader {
  readonly finished: Promise<void>;
  private readonly port: MessagePort;
  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4));
  /** Per chunk index: TODO, BUSY, POSTED or MAIN (see above). */
  private readonly claims: Int32Array;
  private done = false;

  private constructor(private readonly fd: number, jobs: readonly ChunkJob[], private readonly accept: (r: ChunkResult) => void) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.claims = new Int32Array(new SharedArrayBuffer(4 * (jobs.reduce((m, j) => Math.max(m, j.index), -1) + 1)));
    this.finished = new Promise<void>((r) => (this.settle = r));
    this.port.on('message', (m: ChunkResult | { done: true }) => {
      if (this.take(m)) this.end();
    });
    // An idle store's background reads never keep a process alive, as thread-pool reads did not either.
    this.port.unref();
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { fd, ...packJobs(jobs), stop: this.stopFlag.buffer, claims: this.claims.buffer, port: port2 },
      transferList: [port2],
    });
    worker.unref();
    // Whatever it posted before it ended is still queued: taken here, then the reader is done.
    const ended = () => {
      this.drain();
      this.end();
    };
    worker.on('error', ended);
    worker.on('exit', ended);
  }

  private settle!: () => void;

  private end(): void {
    if (this.done) return;
    this.done = true;
    this.port.close();
    // The worker's last message says it is done with the descriptor, and so does its exit.
    fs.closeSync(this.fd);
    this.settle();
  }

  /**
   * Starts a worker on a descriptor of its own for `file`, or returns undefined when `file` is no
   * longer the file `sameFile` describes (a checkpoint renamed another over it) or no worker can
   * start; the caller then reads another way.
   */
  static start(file: string, sameFile: (fd: number) => boolean, jobs: readonly ChunkJob[], accept: (r: ChunkResult) => void): ChunkReader | undefined {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      return undefined;
    }
    try {
      if (!sameFile(fd)) {
        fs.closeSync(fd);
        return undefined;
      }
      return new ChunkReader(fd, jobs, accept);
    } catch {
      fs.closeSync(fd);
      return undefined;
    }
  }

  /** Hands up to `limit` results the worker has finished to `accept` now, without the event loop. */
  drain(limit = Infinity): void {
    for (let n = 0; n < limit && !this.done; n++) {
      const m = receiveMessageOnPort(this.port);
      if (!m) return;
      if (this.take(m.message as ChunkResult | { done: true })) this.end();
    }
  }

  /**
   * For a query that needs chunk `index` now: takes it from the worker when the worker has it or
   * is on it (waiting for it, since doing it here too would only finish later), and returns false
   * when this thread should decompress it, which the worker then skips. False as well when the
   * worker did not deliver (stopped, died, or the chunk is damaged: `accept` has recorded that).
   */
  takeOrClaim(index: number, arrived: () => boolean): boolean {
    if (index >= this.claims.length) return false;
    const was = Atomics.compareExchange(this.claims, index, TODO, MAIN);
    if (was === TODO || was === MAIN) return false;
    const until = performance.now() + WAIT_LIMIT_MS;
    for (;;) {
      this.drain();
      if (arrived()) return true;
      if (this.done || Atomics.load(this.stopFlag, 0) !== 0) return false;
      const left = until - performance.now();
      if (left <= 0) return false;
      // POSTED with nothing on the port means the result was taken and refused (see `take`).
      if (Atomics.load(this.claims, index) === POSTED) {
        this.drain();
        return arrived();
      }
      Atomics.wait(this.claims, index, BUSY, left);
    }
  }

  /** Asks the worker to stop after the chunk it is on; results still queued are dropped. */
  stop(): void {
    Atomics.store(this.stopFlag, 0, 1);
  }

  /** True at the worker's last message. */
  private take(m: ChunkResult | { done: true }): boolean {
    if ('done' in m) return true;
    if (Atomics.load(this.stopFlag, 0) === 0) this.accept(m);
    return false;
  }
}
