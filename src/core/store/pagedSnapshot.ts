import * as fs from 'node:fs';
import type { Capture } from './pagedContents';
import { compressChunk, compressChunkSync, encodePaged, encodePagedSync, PagedFrame, pagedHeader, sha256 } from './pagedFrame';
import { replaceFileDurably } from './durableFile';

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
 * Writes the parts as the snapshot and opens the file written, so the database reads its chunks
 * from there on. Undefined when another process renamed its own file over ours in between (the
 * header hash tells them apart): the caller then keeps reading the file it had.
 */
function writeAndReopen(file: string, parts: Buffer[]): PagedFrame | undefined {
  const header = parts[0] ?? Buffer.alloc(0);
  replaceFileDurably(file, Buffer.concat(parts));
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const frame = PagedFrame.fromFd(file, fd);
    if (frame.headerHash.equals(header.subarray(header.length - 32))) return frame;
    frame.close();
  } catch {
    // Someone else's file, or damaged after the rename: not ours to read from.
  }
  return undefined;
}

/** A whole database (an export, a rebuilt store) as a snapshot. */
export function writePagedSnapshot(file: string, data: Uint8Array): void {
  replaceFileDurably(file, Buffer.concat(encodePagedSync(data)));
}

export async function writePagedSnapshotInBackground(file: string, data: Uint8Array, stillWanted: () => boolean): Promise<void> {
  const parts = await encodePaged(data);
  if (stillWanted()) replaceFileDurably(file, Buffer.concat(parts));
}

function assemble(capture: Capture, compressed: Map<number, Buffer>): Buffer[] {
  const chunks = capture.parts.map((p) => {
    if ('compressed' in p) return { bytes: p.compressed, hash: p.hash };
    const bytes = compressed.get(p.index) ?? Buffer.alloc(0);
    return { bytes, hash: sha256(bytes) };
  });
  return [pagedHeader(capture.size, capture.chunkBytes, chunks.map((c) => ({ length: c.bytes.length, hash: c.hash }))), ...chunks.map((c) => c.bytes)];
}

/** A checkpoint from paged contents: only the changed chunks are compressed. */
export function writeCaptureSync(file: string, capture: Capture): PagedFrame | undefined {
  const compressed = new Map<number, Buffer>();
  for (const p of capture.parts) if ('raw' in p) compressed.set(p.index, compressChunkSync(p.raw));
  return writeAndReopen(file, assemble(capture, compressed));
}

/** The same, compressing on the thread pool two chunks at a time (an idle checkpoint leaves the rest to the host). */
export async function writeCapture(file: string, capture: Capture, stillWanted: () => boolean, parallel = 2): Promise<PagedFrame | undefined> {
  const raw = capture.parts.filter((p): p is Extract<Capture['parts'][number], { raw: Buffer }> => 'raw' in p);
  const compressed = new Map<number, Buffer>();
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < raw.length; k = next++) {
      const p = raw[k];
      if (p) compressed.set(p.index, await compressChunk(p.raw));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, raw.length)) }, worker));
  return stillWanted() ? writeAndReopen(file, assemble(capture, compressed)) : undefined;
}
