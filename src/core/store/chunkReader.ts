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
const { fd, jobs, stop, port } = workerData;
const stopped = new Int32Array(stop);
try {
  for (const job of jobs) {
    if (Atomics.load(stopped, 0) !== 0) break;
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
    } catch (err) {
      port.postMessage({ index: job.index, error: err instanceof Error ? err.message : String(err) });
      break;
    }
  }
} finally {
  port.postMessage({ done: true });
}
`;

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
  private done = false;

  private constructor(private readonly fd: number, jobs: readonly ChunkJob[], private readonly accept: (r: ChunkResult) => void) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.finished = new Promise<void>((r) => (this.settle = r));
    this.port.on('message', (m: ChunkResult | { done: true }) => {
      if (this.take(m)) this.end();
    });
    // An idle store's background reads never keep a process alive, as thread-pool reads did not either.
    this.port.unref();
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { fd, jobs: jobs.map((j) => ({ ...j, hash: Uint8Array.from(j.hash) })), stop: this.stopFlag.buffer, port: port2 },
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
