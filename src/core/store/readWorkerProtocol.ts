import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MessagePort } from 'node:worker_threads';

/**
 * What the main thread and the read worker (readWorker.ts, bundled as dist/readWorker.js) share:
 * the messages each kind of work starts with, and the values of the slots they share.
 */

/** A snapshot read-ahead (chunkReader.ts): the chunks to read from `fd`, packed (see packJobs there). */
export interface ChunkWork {
  kind: 'chunks';
  fd: number;
  /** Per chunk: index, position, compressed length, decompressed size. */
  list: Float64Array;
  /** Each chunk's SHA-256, 32 bytes apiece, in the order of `list`. */
  hashes: Uint8Array;
  /** One Int32 slot: non-zero asks the worker to stop. */
  stop: SharedArrayBuffer;
  /** One Int32 slot per chunk index, holding who decompresses it (TODO, BUSY, POSTED, MAIN). */
  claims: SharedArrayBuffer;
  port: MessagePort;
}

/** What the worker reports per chunk, in the order it was asked: the bytes, or why the chunk is unusable. */
export type ChunkResult = { index: number; bytes: ArrayBuffer } | { index: number; error: string };
/** What a snapshot read-ahead posts: each chunk's result, then `{ done: true }`. */
export type ChunkMessage = ChunkResult | { done: true };

/** Who decompresses a snapshot chunk: nobody yet, the worker, the worker has posted it, the main thread. */
export const TODO = 0;
export const BUSY = 1;
export const POSTED = 2;
export const MAIN = 3;

/** One lcm_grep scan's blob files (blobReader.ts), sent to a worker kept between scans. */
export interface BlobWork {
  /** Each a blob's compressed path; '' for one the caller reads itself. */
  files: readonly string[];
  /** The BLOB_STATE slots below. */
  shared: SharedArrayBuffer;
  port: MessagePort;
  /** Decoded bytes the worker may hold that the main thread has not taken. */
  aheadBytes: number;
}

/** Int32 slots of a blob scan's shared state. */
export const BLOB_STATE = { stop: 0, posted: 1, bytesPosted: 2, bytesTaken: 3, ended: 4 } as const;
export const BLOB_STATE_SLOTS = 5;

/** The bundled worker's file name, beside the bundle that opens a store (scripts/build.mjs). */
const WORKER_FILE = 'readWorker.js';
let found: string | undefined;

/**
 * The read worker's bundle: beside this code when it runs bundled (dist/), else (the tests run
 * the sources) the repository's dist/, which the tests' global setup builds. Undefined when
 * neither exists; the callers then read on the main thread or the thread pool, as they do when
 * a worker cannot start.
 */
export function readWorkerFile(): string | undefined {
  found ??= [path.join(__dirname, WORKER_FILE), path.resolve(__dirname, '../../../dist', WORKER_FILE)].find((f) => fs.existsSync(f));
  return found;
}
