import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempBeside } from './durableFile';
import { FILE_MODE } from './fileWrites';

/**
 * Which snapshot chunks an open's read-ahead decompresses first. A fresh process's first query
 * reaches mostly the same chunks as the last process's did (the schema, the search index's
 * shadow tables, the indexes a staleness check reads), so each process records the first chunks
 * SQLite asked for and the next open's worker starts with those while the main thread opens,
 * instead of starting from the end of the file.
 *
 * The file is only an order. Every chunk is still checked against the snapshot header's hash
 * whoever decompresses it, so a stale, damaged or foreign hint costs time, never a wrong byte;
 * anything unexpected in it is ignored. It is written without fsync: losing it loses speed only.
 */
export const HOT_CHUNKS_FILE = 'store.hot.json';
/** A hint larger than this is not one this code wrote. */
const MAX_BYTES = 64 * 1024;
const MAX_CHUNKS = 1024;

interface HintFile {
  v: 1;
  /** The layout the indexes refer to: a snapshot cut differently (a compaction, another chunk size) reads the hint as nothing. */
  chunkBytes: number;
  count: number;
  chunks: number[];
}

export function hotChunksFile(snapshotFile: string): string {
  return path.join(path.dirname(snapshotFile), HOT_CHUNKS_FILE);
}

/** The hinted chunk indexes for a snapshot of `count` chunks of `chunkBytes`; empty when there is no usable hint. */
export function readHotChunks(snapshotFile: string, chunkBytes: number, count: number): number[] {
  let text: string;
  try {
    const file = hotChunksFile(snapshotFile);
    if (fs.statSync(file).size > MAX_BYTES) return [];
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  let hint: Partial<HintFile>;
  try {
    hint = JSON.parse(text) as Partial<HintFile>;
  } catch {
    return [];
  }
  if (hint?.v !== 1 || hint.chunkBytes !== chunkBytes || hint.count !== count || !Array.isArray(hint.chunks)) return [];
  const seen = new Set<number>();
  for (const i of hint.chunks.slice(0, MAX_CHUNKS)) if (Number.isInteger(i) && i >= 0 && i < count) seen.add(i);
  return [...seen];
}

/** Records `chunks` as the next open's hint (temp file and rename, so a reader sees a whole one); failures are ignored. */
export function writeHotChunks(snapshotFile: string, chunkBytes: number, count: number, chunks: readonly number[]): void {
  const file = hotChunksFile(snapshotFile);
  const temp = tempBeside(file);
  const hint: HintFile = { v: 1, chunkBytes, count, chunks: chunks.slice(0, MAX_CHUNKS) };
  try {
    fs.writeFileSync(temp, JSON.stringify(hint), { mode: FILE_MODE });
    fs.renameSync(temp, file);
  } catch {
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // a hint that could not be written is no hint
    }
  }
}
