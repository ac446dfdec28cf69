import * as fs from 'node:fs';
import type { SqlJsStatic } from 'sql.js';
import { DatabaseFile } from './databaseFile';
import { encodePagedSync } from './pagedFrame';
import { openSnapshot } from './snapshot';
import { queryRows, queryScalar } from './sqlite';
import { FILE_MODE, removeQuietly, writeFully } from './fileWrites';

/**
 * Chunk size of a compacted snapshot (the frame records it; checkpoints keep it). Once tables lie
 * contiguous, what a first query still reads is mostly single rows (the hits' content) spread
 * over a table, one chunk each, so smaller chunks decompress less. On the bench's 214 MB
 * database (first search_text, no read-ahead): 1 MB chunks 35 loaded = 35 MB decompressed, file
 * 66.0 MB; 256 KB 60 = 15 MB, 71.4 MB; 128 KB 80 = 10 MB, 74.9 MB, with more cost per MB.
 */
export const COMPACT_CHUNK_BYTES = 256 * 1024;

/** Which file was compacted: a rename over the path gives a new inode, so this tells a replaced snapshot from ours. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** What the job wrote and what it cost; the file at `out` is synced but not yet renamed over the snapshot. */
export interface CompactedFile {
  out: string;
  source: FileIdentity;
  /** The journal offset the source (and so the compacted file) covers. */
  coveredOffset: number;
  databaseBytesBefore: number;
  databaseBytesAfter: number;
  fileBytesBefore: number;
  fileBytesAfter: number;
  ftsTables: string[];
  /** Milliseconds per phase: load, optimize, vacuum, export, encode, write. */
  phases: Record<string, number>;
  /** Highest RSS of the process running the job, seen between phases (the kernel's maxRSS also sees inside them). */
  rssPeak: number;
  rssBefore: number;
}

export function identityOf(stat: fs.Stats): FileIdentity {
  return { dev: stat.dev, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Rewrites a snapshot in table order: FTS4 'optimize' merges each full-text index into one
 * segment (a term's doclist becomes one run of pages), then VACUUM INTO copies every table and
 * index b-tree by b-tree into a fresh file, so a query's pages sit together instead of being
 * interleaved in insertion order across the whole file. Only the layout changes: VACUUM keeps
 * every rowid (checked for sql.js 1.16 by compaction.test.ts, including tables without an
 * INTEGER PRIMARY KEY, with gaps), and optimize leaves the documents, docids and statistics
 * BM25 reads unchanged. The result covers the same journal offset as the source.
 *
 * Needs about two copies of the database in memory at its peak (the source and the vacuumed
 * file while copying; the vacuumed file and its export after), which is why it runs in a child
 * process that exits afterwards and only when the database has grown (compaction.ts). Measured
 * on the bench's 214 MB database, the peak (~0.9 GB maxRSS) is reached inside VACUUM INTO: every
 * source chunk is loaded by then, and sql.js's in-memory file system grows the target by
 * reallocate-and-copy; the export afterwards stays below it (~0.65 GB), so reading the target
 * without export() would not lower the peak, and sql.js 1.16 exposes no file system to do so.
 */
export async function compactSnapshot(SQL: SqlJsStatic, snapshotFile: string, out: string, options: { chunkBytes?: number; collectGarbage?: () => void; cacheBytes?: number } = {}): Promise<CompactedFile> {
  const { chunkBytes = COMPACT_CHUNK_BYTES, collectGarbage = () => undefined, cacheBytes = Infinity } = options;
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const phases: Record<string, number> = {};
  let t = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases[name] = now - t;
    t = now;
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  };

  const before = fs.statSync(snapshotFile);
  const opened = await openSnapshot(snapshotFile);
  const after = fs.statSync(snapshotFile);
  // The source is read on demand from its chunks, as a store reads it: no whole copy up front,
  // and optimize's growth lands in new chunks instead of a reallocated copy of the file.
  let damage: Error | undefined;
  const { db: source, dbFile } = DatabaseFile.open(SQL, snapshotFile, opened, (err) => (damage ??= err), cacheBytes);
  // A checkpoint renamed over the path while we opened it: it may be either file, so give up.
  if (!opened || !sameIdentity(identityOf(before), identityOf(after))) {
    source.close();
    dbFile.close();
    throw new Error(opened ? 'the snapshot was replaced while it was opened; try again later' : 'there is no snapshot to compact');
  }
  const databaseBytesBefore = Number(queryScalar(source, 'PRAGMA page_count')) * Number(queryScalar(source, 'PRAGMA page_size'));
  let coveredOffset: number;
  let ftsTables: string[];
  const target = new SQL.Database();
  try {
    phase('load');
    // The source is thrown away afterwards: no rollback journal is worth its copy of every merged page.
    source.exec('PRAGMA journal_mode = OFF');
    coveredOffset = Number(queryScalar(source, "SELECT value FROM meta WHERE key = 'journal_offset'") ?? '0');
    ftsTables = queryRows(source, "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts4%' ORDER BY name").map((r) => String(r.name));
    for (const table of ftsTables) source.exec(`INSERT INTO "${table}"("${table}") VALUES ('optimize')`);
    phase('optimize');
    // sql.js exposes no file system, so the vacuumed copy goes into the (empty) file of a second
    // connection, which then exports it.
    source.exec(`VACUUM INTO '/${fileOf(target).replace(/'/g, "''")}'`);
    phase('vacuum');
  } catch (err) {
    target.close();
    throw damage ?? err;
  } finally {
    source.close();
    dbFile.close();
  }
  collectGarbage(); // the source's chunks, before the export makes a second copy of the result
  let encoded: Buffer[];
  let databaseBytesAfter: number;
  try {
    const problem = queryScalar(target, 'PRAGMA quick_check');
    if (problem !== 'ok') throw new Error(`the compacted database fails its check: ${String(problem)}`);
    const data = target.export();
    databaseBytesAfter = data.byteLength;
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    target.close(); // its file is freed: from here the export is the only copy
    collectGarbage();
    phase('export');
    encoded = encodePagedSync(data, chunkBytes);
    phase('encode');
  } finally {
    target.close();
  }
  writeSynced(out, encoded);
  phase('write');
  return {
    out,
    source: identityOf(before),
    coveredOffset,
    databaseBytesBefore,
    databaseBytesAfter,
    fileBytesBefore: before.size,
    fileBytesAfter: encoded.reduce((a, b) => a + b.length, 0),
    ftsTables,
    phases,
    rssPeak,
    rssBefore,
  };
}

/** sql.js names each connection's in-memory file in an untyped property. */
function fileOf(db: object): string {
  const name = (db as { filename?: unknown }).filename;
  if (typeof name !== 'string' || name === '') throw new Error('sql.js no longer names its database file (an sql.js upgrade?): cannot compact');
  return name;
}

/** The temp file is complete and on disk before anyone may rename it over the snapshot. */
function writeSynced(file: string, parts: Buffer[]): void {
  const fd = fs.openSync(file, 'w', FILE_MODE);
  try {
    for (const p of parts) writeFully(fd, p);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    removeQuietly(file);
    throw err;
  }
  fs.closeSync(fd);
}
