import type { Database, SqlJsStatic } from 'sql.js';
import { adoptDatabase } from './adoptDatabase';
import { adoptPaged, PagedContents } from './pagedContents';
import { writeCapture, writeCaptureSync } from './pagedSnapshot';
import { setAside, writeSnapshot, writeSnapshotInBackground, type openSnapshot } from './snapshot';
import { queryScalar } from './sqlite';
import type { PagedFrame } from './pagedFrame';

type Opened = Awaited<ReturnType<typeof openSnapshot>>;

/**
 * The database's file in sql.js and its snapshot on disk, for the Store: opening reads a
 * version 3 snapshot on demand (pagedContents.ts); a checkpoint of such a database writes only
 * the chunks it changed, and anything else (an older snapshot read whole, a rebuilt database, a
 * database whose file was resized under the contents) is exported and compressed whole.
 */
export class DatabaseFile {
  private constructor(
    readonly file: string,
    private paged: PagedContents | undefined,
  ) {}

  static open(SQL: SqlJsStatic, file: string, opened: Opened, onDamage: (err: Error) => void): { db: Database; dbFile: DatabaseFile } {
    if (opened && 'bytes' in opened) return { db: adoptDatabase(SQL, opened.bytes), dbFile: new DatabaseFile(file, undefined) };
    if (opened && opened.paged.frame.size > 0) {
      const paged = new PagedContents(opened.paged.frame, onDamage, opened.paged.first);
      const db = adoptPaged(SQL, paged);
      if (db) return { db, dbFile: new DatabaseFile(file, paged) };
      paged.close();
      throw new Error('sql.js did not take the paged database file (an sql.js upgrade changed its file system?)');
    }
    opened?.paged.frame.close();
    return { db: new SQL.Database(), dbFile: new DatabaseFile(file, undefined) };
  }

  /** For the bench's diagnostics: how much of the database the process has read and written. */
  get stats(): { paged: boolean; loadedChunks: number; dirtyChunks: number; chunkBytes: number; syncLoads: number } {
    const p = this.paged;
    return { paged: !!p && !p.detached, loadedChunks: p?.loadedChunks ?? 0, dirtyChunks: p?.dirtyChunks ?? 0, chunkBytes: p?.chunkBytes ?? 0, syncLoads: p?.syncLoads ?? 0 };
  }

  /**
   * What the paged contents can checkpoint, or undefined when the database must be exported. The
   * caller has committed: with the rollback journal in memory the file is then consistent. The
   * page count is checked against the contents' size so a resize they missed cannot go unseen.
   */
  private capture(db: Database) {
    const p = this.paged;
    if (!p || p.detached || p.damage) return undefined;
    const size = Number(queryScalar(db, 'PRAGMA page_count')) * Number(queryScalar(db, 'PRAGMA page_size'));
    if (size !== p.size) {
      p.detached = true;
      return undefined;
    }
    return { paged: p, capture: p.capture() };
  }

  private rebase(paged: PagedContents, capture: ReturnType<PagedContents['capture']>, written: PagedFrame | undefined): void {
    if (!written) return;
    if (paged !== this.paged) written.close();
    else paged.rebase(written, capture).close();
  }

  writeSync(db: Database, exportDatabase: () => Uint8Array): void {
    const c = this.capture(db);
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

  /** Loads (and so checks) the chunks not read yet, in the background; damage goes to the contents' onDamage. */
  readAhead(): Promise<void> {
    const paged = this.paged;
    return paged?.readAhead(() => paged === this.paged && !paged.detached) ?? Promise.resolve();
  }

  /** Between two operations: takes what the read-ahead finished meanwhile, a little at a time (pagedContents.ts). */
  takeReadAhead(): void {
    this.paged?.takeReadAhead();
  }

  /** The database was replaced by one in plain memory (a rebuild); its snapshot file is no longer read. */
  detach(): void {
    this.paged?.close();
    this.paged = undefined;
  }

  close(): void {
    this.detach();
  }
}
