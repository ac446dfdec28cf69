import * as fs from 'node:fs';
import { SnapshotFormatError, StoreCorruptError } from './errors';
import { PAGED_MAGIC, SNAPSHOT_TAG, SNAPSHOT_VERSION } from './pagedFrame';
import { decodePagedFile, openPagedFrame, writePagedSnapshot, writePagedSnapshotInBackground, type OpenedFrame } from './pagedSnapshot';

const SQLITE_MAGIC = 'SQLite format 3\0';

/**
 * Why the file open at `fd` is not a snapshot in this build's format (pagedFrame.ts), or
 * undefined when it is. Earlier builds, none of them released, wrote other formats; their files
 * are refused rather than read, and the store is rebuilt from its journal (storeOpen.ts).
 */
function formatProblem(fd: number): string | undefined {
  const head = Buffer.alloc(16);
  const n = fs.readSync(fd, head, 0, head.length, 0);
  if (n >= PAGED_MAGIC.length && head.subarray(0, PAGED_MAGIC.length).equals(PAGED_MAGIC)) return undefined;
  const tag = SNAPSHOT_TAG.length;
  const reads = `this build reads snapshot format version ${SNAPSHOT_VERSION} only`;
  if (n > tag && head.toString('latin1', 0, tag) === SNAPSHOT_TAG) {
    const version = head[tag] ?? 0;
    return `in snapshot format version ${version}, written by ${version < SNAPSHOT_VERSION ? 'an earlier' : 'a newer'} build; ${reads}`;
  }
  if (n >= 2 && head[0] === 0x1f && head[1] === 0x8b) return `a gzip file (an earlier build's snapshot); ${reads}`;
  if (n === head.length && head.toString('latin1') === SQLITE_MAGIC) return `an uncompressed SQLite file (an earlier build's snapshot); ${reads}`;
  return undefined;
}

/**
 * Opens the checkpoint file for a store: only its header and first chunk are read and checked,
 * and SQLite reads the rest on demand (pagedContents.ts). Undefined when there is no file; a file
 * in another format throws SnapshotFormatError, a damaged one StoreCorruptError.
 */
export async function openSnapshot(file: string): Promise<{ paged: OpenedFrame } | undefined> {
  const fd = openIfAny(file);
  if (fd === undefined) return undefined;
  refuseOtherFormats(file, fd);
  try {
    return { paged: openPagedFrame(file, fd) }; // owns fd from here
  } catch (err) {
    throw damaged(file, err);
  }
}

/**
 * Reads the whole checkpoint file and checks before sql.js sees it that it is whole: the frame's
 * hashes and the SQLite header's page size and count catch a damaged or truncated file, instead
 * of a half-empty database showing up later. For tools and benches that want the bytes.
 */
export function readSnapshot(file: string): Uint8Array | undefined {
  const fd = openIfAny(file);
  if (fd === undefined) return undefined;
  refuseOtherFormats(file, fd);
  let data: Buffer;
  try {
    data = decodePagedFile(file, fd); // closes fd
  } catch (err) {
    throw damaged(file, err);
  }
  const problem = describeDamage(data);
  if (problem) throw new StoreCorruptError(`store snapshot ${file} is damaged: ${problem}`, file);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Closes `fd` and throws when the file is in a format this build does not read. */
function refuseOtherFormats(file: string, fd: number): void {
  let problem: string | undefined;
  try {
    problem = formatProblem(fd);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  if (problem === undefined) return;
  fs.closeSync(fd);
  throw new SnapshotFormatError(`store snapshot ${file} is ${problem}`, file);
}

function openIfAny(file: string): number | undefined {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function damaged(file: string, err: unknown): StoreCorruptError {
  return new StoreCorruptError(`store snapshot ${file} is damaged: the compressed file cannot be read (${(err as Error).message}; truncated or corrupt)`, file);
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
 * transcript bytes to under 5%. A store opened from a snapshot checkpoints through
 * pagedSnapshot.ts instead, recompressing only the chunks it changed.
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

/**
 * Moves a file aside (never deletes it) and returns where it went: `<file>.corrupt-<time>` for a
 * damaged one, `<file>.old-format-<time>` for one in a format this build does not read.
 */
export function setAside(file: string, now: number, why: 'corrupt' | 'old-format' = 'corrupt'): string {
  const aside = `${file}.${why}-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  fs.renameSync(file, aside);
  return aside;
}
