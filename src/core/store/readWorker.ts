import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { parentPort, workerData } from 'node:worker_threads';
import { readExactly } from './pagedFrame';
import { BLOB_STATE, BUSY, POSTED, TODO, type BlobWork, type ChunkMessage, type ChunkWork } from './readWorkerProtocol';

/**
 * The read worker (bundled as dist/readWorker.js): reads, checks and brotli-decodes files off the
 * main thread, for two callers. A snapshot read-ahead (chunkReader.ts) starts one with its chunks
 * as workerData; lcm_grep's blob read-ahead (lcm/blobReader.ts) keeps one between scans and sends
 * it each scan's files as a message. The descriptor a read-ahead reads from stays the main
 * thread's (Node warns when a worker closes one it did not open); it is closed there.
 */

/** A Buffer's bytes as an ArrayBuffer of their own, to be transferred. */
function ownBuffer(out: Buffer): ArrayBuffer {
  const whole = out.buffer as ArrayBuffer;
  return out.byteOffset === 0 && whole.byteLength === out.length ? whole : whole.slice(out.byteOffset, out.byteOffset + out.length);
}

function readChunks({ fd, list, hashes, stop, claims, port }: ChunkWork): void {
  const post = (m: ChunkMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  const stopped = new Int32Array(stop);
  const claimed = new Int32Array(claims);
  // postMessage has queued the result before this: a main thread woken here finds it on the port.
  const posted = (index: number) => {
    Atomics.store(claimed, index, POSTED);
    Atomics.notify(claimed, index);
  };
  try {
    for (let k = 0; k < list.length / 4; k++) {
      const [index, at, length, raw] = [list[4 * k]!, list[4 * k + 1]!, list[4 * k + 2]!, list[4 * k + 3]!];
      if (Atomics.load(stopped, 0) !== 0) break;
      // A chunk the main thread claimed is being decompressed there: skipped, never done twice.
      if (Atomics.compareExchange(claimed, index, TODO, BUSY) !== TODO) continue;
      try {
        const payload = readExactly(fd, length, at);
        if (!createHash('sha256').update(payload).digest().equals(hashes.subarray(32 * k, 32 * k + 32))) throw new Error(`the checksum does not match (chunk ${index})`);
        const out = brotliDecompressSync(payload, { chunkSize: Math.max(64, raw), maxOutputLength: Math.max(1, raw) });
        if (out.length !== raw) throw new Error(`chunk ${index} decompressed to ${out.length} bytes, the frame says ${raw}`);
        const bytes = ownBuffer(out);
        post({ index, bytes }, [bytes]);
        posted(index);
      } catch (err) {
        post({ index, error: err instanceof Error ? err.message : String(err) });
        posted(index);
        break;
      }
    }
  } finally {
    post({ done: true });
  }
}

/** One scan's files, in order: each decoded, or null when it cannot be read or decoded (the caller then reads it itself). */
function readBlobs({ files, shared, port, aheadBytes }: BlobWork): void {
  const state = new Int32Array(shared);
  let batch: (ArrayBuffer | null)[] = [];
  let transfer: ArrayBuffer[] = [];
  let batchBytes = 0;
  const flush = () => {
    if (!batch.length) return;
    port.postMessage(batch, transfer);
    Atomics.add(state, BLOB_STATE.posted, batch.length);
    Atomics.add(state, BLOB_STATE.bytesPosted, batchBytes);
    Atomics.notify(state, BLOB_STATE.posted);
    batch = [];
    transfer = [];
    batchBytes = 0;
  };
  const stopped = () => Atomics.load(state, BLOB_STATE.stop) !== 0;
  try {
    for (const file of files) {
      if (stopped()) break;
      // Never more than aheadBytes decoded and not yet taken: a scan of every blob would otherwise queue them all.
      while (Atomics.load(state, BLOB_STATE.bytesPosted) - Atomics.load(state, BLOB_STATE.bytesTaken) > aheadBytes && !stopped()) {
        flush();
        Atomics.wait(state, BLOB_STATE.bytesTaken, Atomics.load(state, BLOB_STATE.bytesTaken), 50);
      }
      let bytes: ArrayBuffer | null;
      try {
        bytes = ownBuffer(brotliDecompressSync(fs.readFileSync(file)));
      } catch {
        bytes = null;
      }
      batch.push(bytes);
      if (bytes) {
        transfer.push(bytes);
        batchBytes += bytes.byteLength;
      }
      if (batch.length >= 32 || batchBytes >= 1 << 20) flush();
    }
    flush();
  } finally {
    Atomics.store(state, BLOB_STATE.ended, 1);
    Atomics.notify(state, BLOB_STATE.posted);
    port.close();
  }
}

const data = workerData as ChunkWork | null;
if (data?.kind === 'chunks') readChunks(data);
else parentPort?.on('message', (work: BlobWork) => readBlobs(work));
