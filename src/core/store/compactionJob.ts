import * as fs from 'node:fs';
import type { SqlJsStatic } from 'sql.js';
import { adoptPaged, DatabaseFile } from './databaseFile';
import { tempBeside } from './durableFile';
import { removeQuietly } from './fileWrites';
import { PagedContents } from './pagedContents';
import { PagedFrame } from './pagedFrame';
import { writeCaptureSync } from './pagedSnapshot';
import { openSnapshot } from './snapshot';
import { queryRows, queryScalar } from './sqlite';
import { copyInTableOrder } from './tableOrderCopy';

/**
 * Chunk size of a compacted snapshot (the frame records it; checkpoints keep it). Once tables lie
 * contiguous, what a first query still reads is mostly single rows (the hits' content) spread
 * over a table, one chunk each, so smaller chunks decompress less. On the bench's 214 MB
 * database (first search_text, no read-ahead): 1 MB chunks 35 loaded = 35 MB decompressed, file
 * 66.0 MB; 256 KB 60 = 15 MB, 71.4 MB; 128 KB 80 = 10 MB, 74.9 MB, with more cost per MB.
 */
export const COMPACT_CHUNK_BYTES = 256 * 1024;

/**
 * The source's part of the job's chunk cache; the copy gets the rest. The copy is written in
 * order, one b-tree after another, so what it reads again is little more than the chunk being
 * filled; the source is read one table at a time, and each table's pages are spread through it.
 */
const SOURCE_SHARE = 0.75;

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
  /** Milliseconds per phase: load, optimize, copy, check, write. */
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
 * segment (a term's doclist becomes one run of pages), then every table and index is copied
 * b-tree by b-tree into a fresh file (tableOrderCopy.ts, the steps of VACUUM INTO), so a query's
 * pages sit together instead of being interleaved in insertion order across the whole file. Only
 * the layout changes: every rowid is kept, and optimize leaves the documents, docids and
 * statistics BM25 reads unchanged (compaction.test.ts checks both). The result covers the same
 * journal offset as the source.
 *
 * Both files are paged as the store's own database is (pagedContents.ts): the source is read on
 * demand from its snapshot's chunks, the copy starts empty, and they share `cacheBytes` of
 * decompressed chunks (SOURCE_SHARE); chunks written past that (the source's merged index, most of the
 * copy) go to a private spill file each (chunkSpill.ts). The copy is then written out chunk by
 * chunk, compressed and hashed one at a time (snapshotWriter.ts). So the process holds Node,
 * sql.js and the two caches whatever the database's size (compactionPeakBytes), and the disk
 * holds about the database twice over meanwhile (the spills), besides the new file.
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
  let damage: Error | undefined;
  const onDamage = (err: Error) => (damage ??= err);
  const { db: source, dbFile } = DatabaseFile.open(SQL, snapshotFile, opened, onDamage, cacheBytes * SOURCE_SHARE);
  // A checkpoint renamed over the path while we opened it: it may be either file, so give up.
  if (!opened || !sameIdentity(identityOf(before), identityOf(after))) {
    source.close();
    dbFile.close();
    throw new Error(opened ? 'the snapshot was replaced while it was opened; try again later' : 'there is no snapshot to compact');
  }
  const pageSize = Number(queryScalar(source, 'PRAGMA page_size'));
  const databaseBytesBefore = Number(queryScalar(source, 'PRAGMA page_count')) * pageSize;
  let coveredOffset: number;
  let ftsTables: string[];
  let copy: PagedContents | undefined;
  let databaseBytesAfter: number;
  try {
    phase('load');
    // The source is thrown away afterwards: no rollback journal is worth its copy of every merged page.
    source.exec('PRAGMA journal_mode = OFF');
    coveredOffset = Number(queryScalar(source, "SELECT value FROM meta WHERE key = 'journal_offset'") ?? '0');
    ftsTables = queryRows(source, "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts4%' ORDER BY name").map((r) => String(r.name));
    for (const table of ftsTables) source.exec(`INSERT INTO "${table}"("${table}") VALUES ('optimize')`);
    phase('optimize');
    copy = new PagedContents(PagedFrame.none(out, chunkBytes), onDamage, undefined, cacheBytes * (1 - SOURCE_SHARE), tempBeside(out));
    copy.set(emptyDatabase(SQL, pageSize, Number(queryScalar(source, 'PRAGMA auto_vacuum'))), 0);
    databaseBytesAfter = copyInto(SQL, copy, fileOf(source));
    if (damage) throw damage;
    phase('copy');
  } catch (err) {
    copy?.close();
    throw damage ?? err;
  } finally {
    source.close();
    dbFile.close(); // and its spill file
  }
  collectGarbage(); // the source's chunks
  let fileBytesAfter: number;
  try {
    check(SQL, copy);
    if (damage) throw damage;
    phase('check');
    // Compressed straight from the live chunks (no copy: nothing writes them any more), spilled ones read back one at a time.
    writeCaptureSync(out, copy.capture({ copy: false }))?.close();
    fileBytesAfter = fs.statSync(out).size;
  } catch (err) {
    removeQuietly(out);
    throw damage ?? err;
  } finally {
    copy.close(); // and its spill file
  }
  phase('write');
  return {
    out,
    source: identityOf(before),
    coveredOffset,
    databaseBytesBefore,
    databaseBytesAfter,
    fileBytesBefore: before.size,
    fileBytesAfter,
    ftsTables,
    phases,
    rssPeak,
    rssBefore,
  };
}

/**
 * Copies the source (the database in sql.js's file `sourceFile`) into `copy` through a second
 * connection, in one transaction without a rollback journal (a failed copy is thrown away
 * whole). Returns the copy's size, checked against the contents' own.
 */
function copyInto(SQL: SqlJsStatic, copy: PagedContents, sourceFile: string): number {
  const db = adoptPaged(SQL, copy);
  if (!db) throw new Error('sql.js did not take the paged database file (an sql.js upgrade changed its file system?)');
  try {
    db.exec('PRAGMA journal_mode = OFF');
    db.exec(`ATTACH '/${sourceFile.replace(/'/g, "''")}' AS source`);
    db.exec('BEGIN');
    copyInTableOrder(db, 'source');
    db.exec('COMMIT');
    db.exec('DETACH source');
    const size = Number(queryScalar(db, 'PRAGMA page_count')) * Number(queryScalar(db, 'PRAGMA page_size'));
    if (size !== copy.size) throw new Error(`the compacted database has ${size} bytes but its file ${copy.size}`);
    return size;
  } finally {
    db.close(); // the connection only: the contents stay with the caller
  }
}

/** A fresh connection on the finished copy (so its schema is read from the file, as the store will read it) checks every b-tree. */
function check(SQL: SqlJsStatic, copy: PagedContents): void {
  const db = adoptPaged(SQL, copy);
  if (!db) throw new Error('sql.js did not take the paged database file (an sql.js upgrade changed its file system?)');
  try {
    const problem = queryScalar(db, 'PRAGMA quick_check');
    if (problem !== 'ok') throw new Error(`the compacted database fails its check: ${String(problem)}`);
  } finally {
    db.close();
  }
}

/** An empty database with the source's page size and auto-vacuum mode, which the copy's tables then fill. */
function emptyDatabase(SQL: SqlJsStatic, pageSize: number, autoVacuum: number): Uint8Array {
  const db = new SQL.Database();
  try {
    db.exec(`PRAGMA page_size = ${pageSize}; PRAGMA auto_vacuum = ${autoVacuum}; CREATE TABLE empty (x); DROP TABLE empty; VACUUM`);
    return db.export();
  } finally {
    db.close();
  }
}

/** sql.js names each connection's in-memory file in an untyped property. */
function fileOf(db: object): string {
  const name = (db as { filename?: unknown }).filename;
  if (typeof name !== 'string' || name === '') throw new Error('sql.js no longer names its database file (an sql.js upgrade?): cannot compact');
  return name;
}
