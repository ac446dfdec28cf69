import type { Database, SqlJsStatic } from 'sql.js';
import { PagedContents, type CacheStats } from './pagedContents';
import { writeCapture, writeCaptureSync } from './pagedSnapshot';
import { setAside, writeSnapshot, writeSnapshotInBackground, type openSnapshot } from './snapshot';
import { queryScalar } from './sqlite';
import { PagedFrame } from './pagedFrame';
import { readHotChunks, writeHotChunks } from './hotChunks';
import { tempBeside } from './durableFile';

/** A long-lived process records its hint this long after its open (a short-lived one at close). */
const HINT_AFTER_MS = 20_000;

type Opened = Awaited<ReturnType<typeof openSnapshot>>;

/**
 * The database's file in sql.js and its snapshot on disk, for the Store: opening reads the
 * snapshot on demand (pagedContents.ts), and a store without one starts as new chunks; a
 * checkpoint writes only the chunks it changed, and a database whose file was resized under the
 * contents (VACUUM) is exported and compressed whole.
 */
export class DatabaseFile {
  private reading: Promise<void> | undefined;
  private hintTimer: NodeJS.Timeout | undefined;
  /** Set once the store opened on this file (a failed open records nothing): its first chunks are then worth recording for the next open. */
  private recordHint = false;

  private constructor(
    readonly file: string,
    private paged: PagedContents | undefined,
    private readonly opened: Opened,
  ) {}

  static open(SQL: SqlJsStatic, file: string, opened: Opened, onDamage: (err: Error) => void, cacheBytes = Infinity): { db: Database; dbFile: DatabaseFile } {
    const dbFile = DatabaseFile.prepare(file, opened, onDamage, cacheBytes);
    return { db: dbFile.adopt(SQL), dbFile };
  }

  /**
   * The file before sql.js is ready: a paged snapshot's contents exist (and its read-ahead can
   * start, hinted chunks first) while the wasm still compiles. `adopt` then makes the database.
   */
  static prepare(file: string, opened: Opened, onDamage: (err: Error) => void, cacheBytes = Infinity): DatabaseFile {
    if (!opened || opened.paged.frame.size === 0) {
      // No snapshot yet (or an empty one): the database starts as new chunks, so a first import
      // is paged and bounded like any other write, and its checkpoints write only chunks.
      opened?.paged.frame.close();
      return new DatabaseFile(file, new PagedContents(PagedFrame.none(file), onDamage, undefined, cacheBytes, tempBeside(file), tempBeside(file)), undefined);
    }
    const { frame, first } = opened.paged;
    const paged = new PagedContents(frame, onDamage, first, cacheBytes, tempBeside(file), tempBeside(file));
    paged.readOrder.prefer(readHotChunks(file, frame.chunkBytes, frame.count));
    return new DatabaseFile(file, paged, opened);
  }

  adopt(SQL: SqlJsStatic): Database {
    if (this.paged && this.paged.size === 0) this.paged.set(emptyDatabase(SQL), 0);
    if (this.paged) {
      const db = adoptPaged(SQL, this.paged);
      if (db) return db;
      this.detach();
      throw new Error('sql.js did not take the paged database file (an sql.js upgrade changed its file system?)');
    }
    this.opened?.paged.frame.close();
    return new SQL.Database();
  }

  /** For the bench's diagnostics: how much of the database the process has read and written. */
  get stats(): { paged: boolean; loadedChunks: number; dirtyChunks: number; chunkBytes: number; syncLoads: number; duplicateLoads: number } {
    const p = this.paged;
    return { paged: !!p && !p.detached, loadedChunks: p?.loadedChunks ?? 0, dirtyChunks: p?.dirtyChunks ?? 0, chunkBytes: p?.chunkBytes ?? 0, syncLoads: p?.syncLoads ?? 0, duplicateLoads: p?.duplicateLoads ?? 0 };
  }

  /** The chunk cache's figures (memory_status); undefined when the database is not paged. */
  get cache(): CacheStats | undefined {
    return this.paged && !this.paged.detached ? this.paged.cacheStats : undefined;
  }

  /** A new chunk-cache limit, applied now (memoryBudget.ts `reserving`). */
  limitCache(bytes: number): void {
    if (this.paged && !this.paged.detached) this.paged.limitCache(bytes);
  }

  /** Bytes written since the last checkpoint that only memory holds (the others are in the spill file, chunkSpill.ts). */
  get dirtyBytes(): number {
    return this.paged && !this.paged.detached ? this.paged.dirtyBytes : 0;
  }

  /** Why the spill file could not be written, once that happened. */
  get spillFailure(): Error | undefined {
    return this.paged?.spillFailure;
  }

  /**
   * What the paged contents can checkpoint, or undefined when the database must be exported. The
   * caller has committed: with the rollback journal in memory the file is then consistent. The
   * page count is checked against the contents' size so a resize they missed cannot go unseen.
   */
  private capture(db: Database, copy = true) {
    const p = this.paged;
    if (!p || p.detached || p.damage) return undefined;
    const size = Number(queryScalar(db, 'PRAGMA page_count')) * Number(queryScalar(db, 'PRAGMA page_size'));
    if (size !== p.size) {
      p.detached = true;
      return undefined;
    }
    return { paged: p, capture: p.capture({ copy }) };
  }

  private rebase(paged: PagedContents, capture: ReturnType<PagedContents['capture']>, written: PagedFrame | undefined): void {
    if (!written) return;
    if (paged !== this.paged) written.close();
    else paged.rebase(written, capture).close();
  }

  /**
   * A checkpoint on this thread. Nothing writes the database until it returns, so the changed
   * chunks are compressed straight from the live ones, without a copy.
   */
  writeSync(db: Database, exportDatabase: () => Uint8Array): void {
    const c = this.capture(db, false);
    if (!c) return writeSnapshot(this.file, exportDatabase());
    this.rebase(c.paged, c.capture, writeCaptureSync(this.file, c.capture));
  }

  async writeInBackground(db: Database, exportDatabase: () => Uint8Array, stillWanted: () => boolean): Promise<void> {
    const c = this.capture(db);
    if (!c) return writeSnapshotInBackground(this.file, exportDatabase(), stillWanted);
    this.rebase(c.paged, c.capture, await writeCapture(this.file, c.capture, stillWanted));
  }

  /**
   * After a chunk failed its check: moves the snapshot aside when it is still the file that was
   * read (a newer checkpoint by another process may have replaced it) and says what happened.
   */
  setAsideDamaged(err: Error, now: number): string {
    const where = this.paged?.readsFrom(this.file) ? `It was kept at ${setAside(this.file, now)}` : 'A newer snapshot has replaced it since';
    return `store snapshot ${this.file} is damaged: ${err.message}. ${where} and the memory is rebuilt from the journal.`;
  }

  /**
   * Loads (and so checks) the chunks not read yet, in the background; damage goes to the
   * contents' onDamage. Started early by the open (`startReadAhead`), this only says the store
   * is open: the chunks its first queries ask for are then recorded for the next open.
   */
  readAhead(): Promise<void> {
    if (this.paged && !this.recordHint) {
      this.recordHint = true;
      this.hintTimer = setTimeout(() => this.saveHint(), HINT_AFTER_MS);
      this.hintTimer.unref();
    }
    return this.startReadAhead();
  }

  /** Starts the read-ahead once (later calls return the same run). */
  startReadAhead(): Promise<void> {
    const paged = this.paged;
    this.reading ??= paged?.readAhead(() => paged === this.paged && !paged.detached) ?? Promise.resolve();
    return this.reading;
  }

  /** Records the chunks SQLite asked for first as the next open's hint, while the contents still read the file at `file`. */
  private saveHint(): void {
    const p = this.paged;
    if (!this.recordHint || !p || p.detached || p.damage || p.readOrder.firstAsked.length === 0 || !p.readsFrom(this.file)) return;
    writeHotChunks(this.file, p.chunkBytes, p.snapshotChunks, p.readOrder.nextHint());
  }

  /** Between two operations: takes what the read-ahead finished meanwhile, a little at a time (pagedContents.ts). */
  takeReadAhead(): void {
    this.paged?.takeReadAhead();
  }

  /** The database was replaced by one in plain memory (a rebuild); its snapshot file is no longer read. */
  detach(): void {
    if (this.hintTimer) clearTimeout(this.hintTimer);
    this.recordHint = false;
    this.paged?.close();
    this.paged = undefined;
  }

  close(): void {
    this.saveHint();
    this.detach();
  }
}

/**
 * The bytes of a valid database holding nothing (one page), for a database that starts without a
 * snapshot: sql.js only hands its file to the paged contents when there is something to write.
 */
function emptyDatabase(SQL: SqlJsStatic): Uint8Array {
  const db = new SQL.Database();
  try {
    db.exec('CREATE TABLE empty (x); DROP TABLE empty; VACUUM');
    return db.export();
  } finally {
    db.close();
  }
}

/**
 * Opens sql.js on paged contents: its file system stores a first write as `bytes.slice(0, n)`,
 * so it is handed a carrier whose whole-range slice answers with the contents. The carrier is a
 * plain object, not a typed array of the database's size: it only needs `length`, `subarray`
 * (which marks it as already typed) and `slice`, and Node refuses typed arrays over 4 GiB, which
 * a year's archive exceeds. Returns undefined when sql.js did not take them (it then holds an
 * empty file, which the caller must not use).
 */
export function adoptPaged(SQL: SqlJsStatic, contents: PagedContents): Database | undefined {
  let taken = false;
  const carrier = {
    length: contents.size,
    buffer: undefined,
    subarray(): never {
      throw new Error('sql.js read the carrier of paged contents instead of taking them');
    },
    slice(start?: number, end?: number): unknown {
      if ((start ?? 0) === 0 && (end ?? contents.size) === contents.size) taken = true;
      return taken ? contents : new Uint8Array(0);
    },
  };
  const db = new SQL.Database(carrier as unknown as Uint8Array);
  if (taken) return db;
  db.close();
  return undefined;
}
