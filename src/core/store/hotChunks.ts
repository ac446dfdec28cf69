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

/** How many of the first chunks SQLite asks for are recorded as the next open's hint. */
const HOT_RECORDED = 256;

/**
 * One open's side of the hint: it records the first chunks SQLite asks for, and orders the
 * chunks the read-ahead decompresses, the earlier process's hint first.
 */
export class ReadOrder {
  /** The first chunks SQLite asked for, in that order. */
  readonly firstAsked: number[] = [];
  private readonly asked: Uint8Array;
  /** Chunks the read-ahead does first (the hint an earlier process wrote). */
  private hot: readonly number[] = [];

  constructor(count: number) {
    this.asked = new Uint8Array(count);
  }

  /** SQLite asked for chunk i (past the snapshot's chunks nothing is recorded: there is nothing to read ahead there). */
  asking(i: number): void {
    if (this.asked[i] !== 0) return;
    this.asked[i] = 1;
    if (this.firstAsked.length < HOT_RECORDED) this.firstAsked.push(i);
  }

  /** Which chunks the read-ahead does first; set before it starts. */
  prefer(hot: readonly number[]): void {
    this.hot = hot;
  }

  /**
   * The chunks of `count` not `held`, in the order the read-ahead takes them: the hinted ones
   * first (what an earlier process's first queries asked for, so this one's find them ready),
   * then the rest from the end: a query scanning a table reads forward from its early pages, so
   * the two meet in the middle instead of decompressing the same chunks twice. No more than
   * `room`: a read-ahead past the cache would only evict what it read first.
   */
  order(count: number, held: (i: number) => boolean, room: number): number[] {
    const queued = new Uint8Array(count);
    const order: number[] = [];
    const add = (i: number) => {
      if (Number.isInteger(i) && i >= 0 && i < count && queued[i] === 0 && !held(i)) {
        queued[i] = 1;
        order.push(i);
      }
    };
    for (const i of this.hot) add(i);
    for (let i = count - 1; i >= 0; i--) add(i);
    return order.length > room ? order.slice(0, room) : order;
  }

  /**
   * The next open's hint: the chunks this process asked for first, then the earlier hint's others,
   * so a process that asked for little (one that opened and closed without a search) does not
   * wipe what the ones before it learned.
   */
  nextHint(): number[] {
    const out = [...this.firstAsked];
    for (const i of this.hot) if (out.length < HOT_RECORDED && this.asked[i] === 0) out.push(i);
    return out;
  }
}
