import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { BLOB_STATE, BLOB_STATE_SLOTS, readWorkerFile, type BlobWork } from '../store/readWorkerProtocol';

/**
 * Reads and brotli-decodes a list of compressed blob files ahead of lcm_grep's regex scan, on a
 * worker thread. Opening, reading and decoding the blobs is most of a large scan's time, and the
 * main thread has its own share to do meanwhile (the inline rows, the regex), so on two cores
 * the two overlap. The results are taken synchronously and in order (`next`), the way the
 * snapshot's read-ahead (store/chunkReader.ts) hands over its chunks, so the scan stays a plain
 * loop; an async prefetch on the thread pool was slower, since the main thread only picks its
 * results up between event-loop turns.
 *
 * The worker only reads and decodes a file: anything it cannot (a missing file, a plain blob, a
 * damaged one) comes back as null and the caller reads that blob the ordinary way, so every
 * answer is the blob store's own. The worker's program is store/readWorker.ts.
 */

/**
 * What a worker's memory is reserved through (Store.reserveMemory for one part): called with the
 * bytes the worker holds now, 0 once it has ended. The budget shrinks the chunk cache by as much,
 * so a process scanning its largest blobs stays within it.
 */
export type MemoryHold = (bytes: number) => void;

/**
 * One worker kept between scans. Starting a worker costs ~25–30 ms before it reads its first
 * blob, and a full pass ends waiting for the worker, so every call paid it (measured on the
 * 1 GB bench). Idle, it waits for a message and costs no CPU; it is unref'd, so it never keeps
 * the process alive, and ended after IDLE_MS unused. While it lives its memory is reserved
 * through the hold of the scan that last took it: WORKER_BYTES idle, more while it reads ahead.
 */
class IdleWorker {
  private static idle: { worker: Worker; timer: NodeJS.Timeout } | undefined;
  private static readonly ended = new WeakSet<Worker>();
  private static readonly holds = new Map<Worker, MemoryHold>();

  /** The idle worker, or a new one from this build's read worker bundle, its memory (`bytes`) reserved through `hold`. */
  static take(workerFile: string, hold: MemoryHold | undefined, bytes: number): Worker {
    const kept = IdleWorker.idle;
    IdleWorker.idle = undefined;
    if (kept) clearTimeout(kept.timer);
    const worker = kept?.worker ?? IdleWorker.start(workerFile);
    const before = IdleWorker.holds.get(worker);
    if (before && before !== hold) before(0);
    if (hold) {
      IdleWorker.holds.set(worker, hold);
      hold(bytes);
    } else IdleWorker.holds.delete(worker);
    return worker;
  }

  private static start(workerFile: string): Worker {
    const worker = new Worker(workerFile);
    worker.unref();
    // An error ends it (the scan then reads the rest itself, see `next`): only kept from being thrown, and never kept idle.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      IdleWorker.ended.add(worker);
      IdleWorker.holds.get(worker)?.(0);
      IdleWorker.holds.delete(worker);
      if (IdleWorker.idle?.worker !== worker) return;
      clearTimeout(IdleWorker.idle.timer);
      IdleWorker.idle = undefined;
    });
    return worker;
  }

  /** Back to idle once a scan is done with it; one is kept, a second (two scans at once) is ended. */
  static give(worker: Worker, healthy: boolean): void {
    if (!healthy || IdleWorker.idle || IdleWorker.ended.has(worker)) {
      void worker.terminate();
      return;
    }
    IdleWorker.holds.get(worker)?.(WORKER_BYTES);
    const timer = setTimeout(() => {
      if (IdleWorker.idle?.worker === worker) IdleWorker.idle = undefined;
      void worker.terminate();
    }, IDLE_MS);
    timer.unref();
    IdleWorker.idle = { worker, timer };
  }
}

/** A worker thread's own resident memory while it waits for work: its isolate and the bundle (docs/performance.md, GREPHOLD). */
const WORKER_BYTES = 12 * 1024 * 1024;

/** How long an idle worker is kept for the next scan. */
const IDLE_MS = 60_000;

/** How far ahead (decoded bytes not yet taken) the worker may read. */
const AHEAD_BYTES = 16 * 1024 * 1024;
/**
 * What a scan holds besides the worker: the decoded bytes ahead, and as much again on the main
 * thread for the texts decoded from them that the garbage collector has not taken back yet.
 */
const scanBytes = (aheadBytes: number) => WORKER_BYTES + 2 * aheadBytes;
/** How long `next` waits for the worker at a time before looking at the port again. */
const WAIT_MS = 20;
/** A worker that posts nothing for this long is given up on (it died or never started): the caller reads the rest itself. */
const STALL_MS = 10_000;

export class BlobReader {
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private readonly state = new Int32Array(new SharedArrayBuffer(4 * BLOB_STATE_SLOTS));
  private queue: (ArrayBuffer | null)[] = [];
  private at = 0;
  private taken = 0;
  private failed = false;
  private stalled = false;
  private closed = false;
  private stalledSince: number | undefined;

  private constructor(workerFile: string, private readonly files: readonly string[], aheadBytes: number, hold: MemoryHold | undefined) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = IdleWorker.take(workerFile, hold, scanBytes(aheadBytes));
    const work: BlobWork = { files, shared: this.state.buffer as SharedArrayBuffer, port: port2, aheadBytes };
    this.worker.postMessage(work, [port2]);
    // A scan abandoned halfway never keeps the process alive.
    this.port.unref();
  }

  /**
   * A reader for these files (each a blob's compressed path), or undefined when no worker can
   * start (or this build has none); the worker's memory is reserved through `hold` while it lives.
   */
  static start(files: readonly string[], aheadBytes = AHEAD_BYTES, hold?: MemoryHold): BlobReader | undefined {
    const workerFile = readWorkerFile();
    if (!workerFile) return undefined;
    try {
      return new BlobReader(workerFile, files, aheadBytes, hold);
    } catch {
      return undefined;
    }
  }

  /**
   * The next file's decoded bytes, in the order given; null when the worker could not read or
   * decode it (or has stopped), and the caller reads it itself.
   */
  next(): Buffer | null {
    if (this.at >= this.files.length) throw new Error('BlobReader: read past the end of its list');
    this.at++;
    while (!this.queue.length) {
      const m = receiveMessageOnPort(this.port);
      if (m) {
        this.queue = m.message as (ArrayBuffer | null)[];
        this.queue.reverse();
        break;
      }
      if (this.failed) return null;
      const posted = Atomics.load(this.state, BLOB_STATE.posted);
      if (posted > this.taken) continue; // posted but not delivered yet: look again
      if (Atomics.load(this.state, BLOB_STATE.ended) !== 0 && Atomics.load(this.state, BLOB_STATE.posted) === posted) {
        // Ended without this file (stopped, or an error in the worker): the rest is read by the caller.
        this.failed = true;
        return null;
      }
      const since = Date.now();
      if (Atomics.wait(this.state, BLOB_STATE.posted, posted, WAIT_MS) === 'timed-out' && (this.stalledSince ??= since) < Date.now() - STALL_MS) {
        this.failed = true;
        this.stalled = true;
        this.close();
        return null;
      }
      if (Atomics.load(this.state, BLOB_STATE.posted) !== posted) this.stalledSince = undefined;
    }
    const bytes = this.queue.pop() ?? null;
    this.taken++;
    if (bytes) {
      Atomics.add(this.state, BLOB_STATE.bytesTaken, bytes.byteLength);
      Atomics.notify(this.state, BLOB_STATE.bytesTaken);
    }
    return bytes ? Buffer.from(bytes) : null;
  }

  /** Stops the worker's work on this list (at its next file) and lets it wait for the next; what it had queued is dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.state, BLOB_STATE.stop, 1);
    Atomics.notify(this.state, BLOB_STATE.bytesTaken);
    this.port.close();
    // A worker that stalled may be stuck: never handed to the next scan.
    IdleWorker.give(this.worker, !this.stalled);
  }
}

/**
 * A BlobReader over the blobs a scan will read, in the order it reads them: `take(hash)` hands
 * over the decoded bytes when `hash` is the next one listed, else undefined, and the caller then
 * reads the blob itself (as it does for whatever the worker could not read). A second worker,
 * measured on the 1 GB bench, was no faster: the main thread and one worker already keep both
 * cores busy.
 */
export class ReadAhead {
  private at = 0;

  private constructor(private readonly hashes: readonly string[], private readonly reader: BlobReader) {}

  static start(hashes: readonly string[], compressedPathOf: (hash: string) => string | undefined, hold?: MemoryHold): ReadAhead | undefined {
    const files = hashes.map((h) => compressedPathOf(h) ?? '');
    const reader = BlobReader.start(files, AHEAD_BYTES, hold);
    return reader && new ReadAhead(hashes, reader);
  }

  take(hash: string): Buffer | undefined {
    if (this.hashes[this.at] !== hash) return undefined;
    this.at++;
    return this.reader.next() ?? undefined;
  }

  close(): void {
    this.reader.close();
  }
}
