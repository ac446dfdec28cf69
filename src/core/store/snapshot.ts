import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { CHUNKED_MAGIC, decodeChunked, decodeChunkedSync } from './chunkedFrame';
import { StoreCorruptError } from './errors';
import { decodePagedFile, isPagedFile, openPagedFrame, writePagedSnapshot, writePagedSnapshotInBackground, type OpenedFrame } from './pagedSnapshot';

const SQLITE_MAGIC = 'SQLite format 3\0';
/** A gzip member starts with these two bytes; a SQLite file never does (earlier builds wrote gzip). */
const GZIP_MAGIC = [0x1f, 0x8b] as const;
/**
 * Frame version 1 (read, no longer written; this build writes version 3, pagedFrame.ts): this
 * magic, the database's size (8 bytes), the SHA-256 of the payload (32 bytes), then the database
 * compressed with brotli as one stream. Brotli has no checksum of its own, so the hash (over
 * the compressed bytes) is what proves the file whole.
 */
const FRAME_MAGIC = Buffer.from('RCLSNAP\x01', 'latin1');
const FRAME_HEADER = FRAME_MAGIC.length + 8 + 32;
/*
 * Version 1, and version 2 written as one chunk, compress with brotli quality 4 and a 16 MB
 * window (several chunks get 4 MB each, see chunkedFrame.ts). On the bench's 66 MB
 * snapshot: gzip -1 gave 15.5 MB in 513 ms and inflated in 257 ms; brotli gives 4.6 MB in 471 ms
 * and decompresses in 107 ms. The window is what wins: a store holds the same text in several
 * tables (events, the search index's copy) megabytes apart, which gzip's 32 KB window never sees.
 */

/**
 * Opens the checkpoint file for a store: a version 3 file (what this build writes) is only
 * opened, its header and first chunk checked, and SQLite reads the rest on demand
 * (pagedContents.ts); older files are read and checked whole, as `readSnapshotAsync` does.
 */
export async function openSnapshot(file: string): Promise<{ paged: OpenedFrame } | { bytes: Uint8Array } | undefined> {
  const fd = openIfAny(file);
  if (fd === undefined) return undefined;
  let data: Buffer;
  try {
    if (isPagedFile(fd)) {
      try {
        return { paged: openPagedFrame(file, fd) }; // owns fd from here
      } catch (err) {
        throw damaged(file, err);
      }
    }
    data = fs.readFileSync(fd);
  } catch (err) {
    if (!(err instanceof StoreCorruptError)) fs.closeSync(fd);
    throw err;
  }
  fs.closeSync(fd);
  return { bytes: await decodeAsync(file, data) };
}

/**
 * Reads the whole checkpoint file — chunked brotli, version 3 or 2 (what this and earlier builds
 * write), single-stream brotli, gzip or a plain SQLite file (the first builds) — and checks before
 * sql.js sees it that it is whole: the frame's hashes, gzip's CRC and length, and the SQLite
 * header's page size and count catch a damaged or truncated file, instead of a half-empty
 * database showing up later.
 */
export function readSnapshot(file: string): Uint8Array | undefined {
  const read = readWhole(file);
  if (!read) return undefined;
  if ('decoded' in read) return read.decoded;
  const { data } = read;
  return checked(file, () => (hasMagic(data, CHUNKED_MAGIC) ? decodeChunkedSync(data) : decodeOlder(data)));
}

/**
 * The same, with a version 2 file's chunks hashed and decompressed side by side on libuv's thread
 * pool; this thread is free for other work while it waits.
 */
export async function readSnapshotAsync(file: string): Promise<Uint8Array | undefined> {
  const read = readWhole(file);
  if (!read) return undefined;
  return 'decoded' in read ? read.decoded : decodeAsync(file, read.data);
}

/** A version 3 file decoded and checked, or the raw bytes of an older one; undefined when there is no file. */
function readWhole(file: string): { decoded: Uint8Array } | { data: Buffer } | undefined {
  const fd = openIfAny(file);
  if (fd === undefined) return undefined;
  let data: Buffer;
  try {
    if (isPagedFile(fd)) return { decoded: checked(file, () => decodePagedFile(file, fd)) }; // closes fd
    data = fs.readFileSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  fs.closeSync(fd);
  return { data };
}

async function decodeAsync(file: string, data: Buffer): Promise<Uint8Array> {
  let database: Buffer;
  try {
    database = hasMagic(data, CHUNKED_MAGIC) ? await decodeChunked(data) : decodeOlder(data);
  } catch (err) {
    throw damaged(file, err);
  }
  return checked(file, () => database);
}

function openIfAny(file: string): number | undefined {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function decodeOlder(data: Buffer): Buffer {
  if (hasMagic(data, FRAME_MAGIC)) return unframe(data);
  if (isGzip(data)) return gunzipSync(data, { chunkSize: gzipOutputChunk(data) });
  return data;
}

function damaged(file: string, err: unknown): StoreCorruptError {
  return new StoreCorruptError(`store snapshot ${file} is damaged: the compressed file cannot be read (${(err as Error).message}; truncated or corrupt)`, file);
}

function checked(file: string, decode: () => Buffer): Uint8Array {
  let data: Buffer;
  try {
    data = decode();
  } catch (err) {
    throw damaged(file, err);
  }
  const problem = describeDamage(data);
  if (problem) throw new StoreCorruptError(`store snapshot ${file} is damaged: ${problem}`, file);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function hasMagic(data: Buffer, magic: Buffer): boolean {
  return data.length >= magic.length && data.subarray(0, magic.length).equals(magic);
}

function unframe(data: Buffer): Buffer {
  if (data.length < FRAME_HEADER) throw new Error(`only ${data.length} bytes, shorter than the frame header`);
  const size = Number(data.readBigUInt64LE(FRAME_MAGIC.length));
  const payload = data.subarray(FRAME_HEADER);
  const hash = createHash('sha256').update(payload).digest();
  if (!hash.equals(data.subarray(FRAME_MAGIC.length + 8, FRAME_HEADER))) throw new Error('the checksum does not match');
  // One output chunk of the known size spares zlib from joining hundreds of small ones.
  const out = brotliDecompressSync(payload, { chunkSize: Math.max(64 * 1024, Math.min(size, 1024 * 1024 * 1024)) });
  if (out.length !== size) throw new Error(`decompressed to ${out.length} bytes, the frame says ${size}`);
  return out;
}

/**
 * gzip's trailer states the inflated size (mod 4 GiB); it is not trusted beyond a sane bound:
 * a damaged one only costs speed.
 */
function gzipOutputChunk(data: Buffer): number {
  const stated = data.readUInt32LE(data.length - 4);
  return Math.max(64 * 1024, Math.min(stated, data.length * 64, 1024 * 1024 * 1024));
}

function isGzip(data: Buffer): boolean {
  return data.length >= 2 && data[0] === GZIP_MAGIC[0] && data[1] === GZIP_MAGIC[1];
}

function describeDamage(data: Buffer): string | undefined {
  if (data.length < 100) return `only ${data.length} bytes, shorter than a SQLite header`;
  if (data.toString('latin1', 0, 16) !== SQLITE_MAGIC) return 'not a SQLite file (bad header)';
  const rawPageSize = data.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pageCount = data.readUInt32BE(28);
  const expected = pageSize * pageCount;
  if (pageCount > 0 && expected !== data.length) return `header says ${expected} bytes, file has ${data.length} (truncated or padded)`;
  return undefined;
}

/**
 * The snapshot is replaced whole or not at all, compressed: the database pages are mostly
 * text and index entries, and compression brought the bench's snapshot from 66% of the raw
 * transcript bytes to under 5%, at the cost of compressing on each checkpoint and
 * decompressing what an open reads (both measured above). A store opened from a version 3 file
 * checkpoints through pagedSnapshot.ts instead, recompressing only the chunks it changed.
 */
export function writeSnapshot(file: string, data: Uint8Array): void {
  writePagedSnapshot(file, data);
}

/**
 * The same file, compressed on libuv's thread pool: at 224 MB the compression takes seconds,
 * which an idle checkpoint must not spend blocking the extension host's event loop.
 */
export async function writeSnapshotInBackground(file: string, data: Uint8Array, stillWanted: () => boolean): Promise<void> {
  await writePagedSnapshotInBackground(file, data, stillWanted);
}

/** Moves a damaged file aside (never deletes it) and returns where it went. */
export function setAside(file: string, now: number): string {
  const aside = `${file}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  fs.renameSync(file, aside);
  return aside;
}
