import * as fs from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { BUSY, MAIN, POSTED, readWorkerFile, TODO, type ChunkResult, type ChunkWork } from './readWorkerProtocol';

/** One chunk for the worker: where its compressed bytes are, their hash and its size once decompressed. */
export interface ChunkJob {
  index: number;
  at: number;
  length: number;
  hash: Uint8Array;
  raw: number;
}

export type { ChunkResult } from './readWorkerProtocol';

/** How long a query waits for a chunk the worker is on before doing it itself (a worker that died never posts it). */
const WAIT_LIMIT_MS = 2000;

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

  private constructor(workerFile: string, private readonly fd: number, jobs: readonly ChunkJob[], private readonly accept: (r: ChunkResult) => void) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.claims = new Int32Array(new SharedArrayBuffer(4 * (jobs.reduce((m, j) => Math.max(m, j.index), -1) + 1)));
    this.finished = new Promise<void>((r) => (this.settle = r));
    this.port.on('message', (m: ChunkResult | { done: true }) => {
      if (this.take(m)) this.end();
    });
    // An idle store's background reads never keep a process alive, as thread-pool reads did not either.
    this.port.unref();
    const work: ChunkWork = { kind: 'chunks', fd, ...packJobs(jobs), stop: this.stopFlag.buffer as SharedArrayBuffer, claims: this.claims.buffer as SharedArrayBuffer, port: port2 };
    const worker = new Worker(workerFile, { workerData: work, transferList: [port2] });
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
   * start (this build has no read worker, see readWorkerFile); the caller then reads another way.
   */
  static start(file: string, sameFile: (fd: number) => boolean, jobs: readonly ChunkJob[], accept: (r: ChunkResult) => void): ChunkReader | undefined {
    const workerFile = readWorkerFile();
    if (!workerFile) return undefined;
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
      return new ChunkReader(workerFile, fd, jobs, accept);
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
