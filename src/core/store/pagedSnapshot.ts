import * as fs from 'node:fs';
import type { Capture } from './pagedContents';
import { compressChunk, compressChunkSync, encodePaged, encodePagedSync, PagedFrame } from './pagedFrame';
import { SnapshotWriter } from './snapshotWriter';
import { replaceFileDurably } from './durableFile';
import { zeroFreePagesIn } from './freePages';

/** The checked first chunk of a freshly opened frame, handed on so it is not read twice. */
export interface OpenedFrame {
  frame: PagedFrame;
  first: Buffer | undefined;
}

/**
 * Takes over `fd` (closed on failure) and checks what an open can check without reading the
 * database: the header's hash, the file's length, and the first chunk (hash, and the SQLite
 * header's page size × count against the frame's size), so a torn or flipped file is refused
 * at open as before. The other chunks are checked when first read.
 */
export function openPagedFrame(file: string, fd: number): OpenedFrame {
  const frame = frameTakingOver(file, fd);
  try {
    if (frame.size === 0) return { frame, first: undefined };
    const first = frame.load(0);
    const problem = headerDamage(first, frame.size);
    if (problem) throw new Error(problem);
    return { frame, first };
  } catch (err) {
    frame.close();
    throw err;
  }
}

/** The frame read from `fd`, which it then owns; `fd` is closed when the frame cannot be read. */
function frameTakingOver(file: string, fd: number): PagedFrame {
  try {
    return PagedFrame.fromFd(file, fd);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/** The SQLite header's own claims (magic, page size × page count) against the frame's size. */
function headerDamage(first: Buffer, size: number): string | undefined {
  if (size < 100 || first.length < 100) return `only ${size} bytes, shorter than a SQLite header`;
  if (first.toString('latin1', 0, 16) !== 'SQLite format 3\0') return 'not a SQLite file (bad header)';
  const rawPageSize = first.readUInt16BE(16);
  const pageCount = first.readUInt32BE(28);
  const expected = (rawPageSize === 1 ? 65536 : rawPageSize) * pageCount;
  if (pageCount > 0 && expected !== size) return `header says ${expected} bytes, file has ${size} (truncated or padded)`;
  return undefined;
}

/** The whole database of a snapshot file, decoded eagerly (tools and benches that want the bytes); takes over `fd`. */
export function decodePagedFile(file: string, fd: number): Buffer {
  const frame = frameTakingOver(file, fd);
  try {
    const out = Buffer.allocUnsafeSlow(frame.size);
    for (let i = 0; i < frame.count; i++) frame.load(i).copy(out, i * frame.chunkBytes);
    return out;
  } finally {
    frame.close();
  }
}

/**
 * Opens the file just renamed to `file`, so the database reads its chunks from there on.
 * Undefined when another process renamed its own file over ours in between (the header hash
 * tells them apart): the caller then keeps reading the file it had.
 */
function reopenWritten(file: string, headerHash: Buffer): PagedFrame | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const frame = PagedFrame.fromFd(file, fd);
    if (frame.headerHash.equals(headerHash)) return frame;
    frame.close();
  } catch {
    // Someone else's file, or damaged after the rename: not ours to read from.
  }
  return undefined;
}

/** A whole database (an export, a rebuilt store) as a snapshot, its free pages zeroed (freePages.ts). */
export function writePagedSnapshot(file: string, data: Uint8Array): void {
  zeroFreePagesIn(data);
  replaceFileDurably(file, Buffer.concat(encodePagedSync(data)));
}

export async function writePagedSnapshotInBackground(file: string, data: Uint8Array, stillWanted: () => boolean): Promise<void> {
  zeroFreePagesIn(data);
  const parts = await encodePaged(data);
  if (stillWanted()) replaceFileDurably(file, Buffer.concat(parts));
}

/**
 * A checkpoint from paged contents: only the changed chunks are compressed, the others copied
 * from the old file one at a time; the new file is written chunk by chunk (snapshotWriter.ts),
 * so what this holds at once is one chunk, never the file.
 */
export function writeCaptureSync(file: string, capture: Capture): PagedFrame | undefined {
  const out = writerFor(file, capture);
  try {
    // Compressed before the next is read: one buffer serves every chunk read from the spill.
    const scratch = Buffer.allocUnsafeSlow(capture.chunkBytes);
    for (const p of capture.parts) {
      if ('hash' in p) out.add(capture.readCompressed(p.index), p.hash);
      else out.add(compressChunkSync(rawOf(capture, p, scratch)));
    }
    return reopenWritten(file, out.commit());
  } finally {
    out.abandon();
    capture.done();
  }
}

/** The writer of the capture's new file; a failure to start it (a full disk) also ends the capture. */
function writerFor(file: string, capture: Capture): SnapshotWriter {
  try {
    return new SnapshotWriter(file, capture.size, capture.chunkBytes, capture.parts.length);
  } catch (err) {
    capture.done();
    throw err;
  }
}

/** A changed chunk's database bytes: held by the capture, or read from the spill file. */
function rawOf(capture: Capture, p: { index: number; raw: Buffer } | { index: number; slot: number }, into?: Buffer): Buffer {
  if ('raw' in p) return p.raw;
  return capture.readSpilled(p.slot, Math.min(capture.chunkBytes, capture.size - p.index * capture.chunkBytes), into);
}

/**
 * The same, compressing on the thread pool `parallel` chunks at a time (an idle checkpoint leaves
 * the rest to the host), each written as soon as it and those before it are done. Undefined, and
 * nothing renamed, once `stillWanted` says a newer checkpoint has landed.
 */
export async function writeCapture(file: string, capture: Capture, stillWanted: () => boolean, parallel = 2): Promise<PagedFrame | undefined> {
  const out = writerFor(file, capture);
  try {
    const pending = new Map<number, Promise<Buffer>>();
    const parts = capture.parts;
    let ahead = 0;
    const start = (k: number) => {
      const p = parts[k];
      if (!p || 'hash' in p) return;
      const compressing = compressChunk(rawOf(capture, p));
      compressing.catch(() => undefined); // awaited below unless the checkpoint is dropped first
      pending.set(k, compressing);
    };
    for (let k = 0; k < parts.length; k++) {
      for (; ahead < parts.length && ahead < k + parallel; ahead++) start(ahead);
      const p = parts[k];
      if (!p) continue;
      if (!('hash' in p)) {
        const compressed = await (pending.get(k) as Promise<Buffer>);
        pending.delete(k);
        if (!stillWanted()) return undefined;
        out.add(compressed);
      } else {
        // Checked right before the read: a newer checkpoint may have closed the file it reads.
        if (!stillWanted()) return undefined;
        out.add(capture.readCompressed(p.index), p.hash);
      }
    }
    if (!stillWanted()) return undefined;
    return reopenWritten(file, out.commit());
  } finally {
    out.abandon();
    capture.done();
  }
}
