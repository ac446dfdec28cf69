import * as fs from 'node:fs';
import { replaceFileDurably } from './durableFile';
import { StoreCorruptError } from './errors';

const SQLITE_MAGIC = 'SQLite format 3\0';

/**
 * Reads the checkpoint file and checks, cheaply and before sql.js sees it, that it is a whole
 * SQLite file: the header names the page size and page count, so a truncated copy shows up
 * as a size mismatch instead of as a half-empty database later.
 */
export function readSnapshot(file: string): Uint8Array | undefined {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const problem = describeDamage(data);
  if (problem) throw new StoreCorruptError(`store snapshot ${file} is damaged: ${problem}`, file);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
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

/** The snapshot is replaced whole or not at all. */
export function writeSnapshot(file: string, data: Uint8Array): void {
  replaceFileDurably(file, data);
}

/** Moves a damaged file aside (never deletes it) and returns where it went. */
export function setAside(file: string, now: number): string {
  const aside = `${file}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  fs.renameSync(file, aside);
  return aside;
}
