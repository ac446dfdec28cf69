import * as fs from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { replaceFileDurably } from './durableFile';
import { StoreCorruptError } from './errors';

const SQLITE_MAGIC = 'SQLite format 3\0';
/** A gzip member starts with these two bytes; a SQLite file never does. */
const GZIP_MAGIC = [0x1f, 0x8b] as const;
/**
 * Level 1: on the bench's 68 MB snapshot, levels 1 and 6 gave 23% and 21% of the size, but 6
 * took over twice as long to write, and a checkpoint blocks its process while it runs.
 */
const GZIP_LEVEL = 1;

/**
 * Reads the checkpoint file, gzip-compressed (what this build writes) or a plain SQLite file
 * (what older builds wrote), and checks before sql.js sees it that it is whole: gzip's CRC and
 * length catch a damaged or truncated compressed file, and the SQLite header's page size and
 * count catch a truncated plain one, instead of a half-empty database showing up later.
 */
export function readSnapshot(file: string): Uint8Array | undefined {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (isGzip(data)) {
    try {
      data = gunzipSync(data, { chunkSize: outputChunk(data) });
    } catch (err) {
      throw new StoreCorruptError(`store snapshot ${file} is damaged: the compressed file cannot be read (${(err as Error).message}; truncated or corrupt)`, file);
    }
  }
  const problem = describeDamage(data);
  if (problem) throw new StoreCorruptError(`store snapshot ${file} is damaged: ${problem}`, file);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * gzip's trailer states the inflated size (mod 4 GiB); one output chunk of that size spares
 * zlib from joining hundreds of small ones, which made inflating the bench's snapshot about
 * 15% faster. The trailer is not trusted beyond a sane bound: a damaged one only costs speed.
 */
function outputChunk(data: Buffer): number {
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
 * text and index entries, and gzip brought the bench's snapshot from 68% to 16% of the raw
 * transcript bytes, at the cost of compressing on each checkpoint and inflating on each open.
 */
export function writeSnapshot(file: string, data: Uint8Array): void {
  replaceFileDurably(file, gzipSync(data, { level: GZIP_LEVEL }));
}

/** Moves a damaged file aside (never deletes it) and returns where it went. */
export function setAside(file: string, now: number): string {
  const aside = `${file}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  fs.renameSync(file, aside);
  return aside;
}
