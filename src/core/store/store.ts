import * as fs from 'node:fs';
import * as path from 'node:path';
import { BlobStore } from './blobStore';
import { StoreCorruptError } from './errors';
import { FileLock } from './fileLock';
import { Journal, type Operation } from './journal';
import { migrate, readMeta, writeMeta, type StoreModule } from './schema';
import { adoptDatabase } from './adoptDatabase';
import { readSnapshotAsync, setAside, writeSnapshot, writeSnapshotInBackground } from './snapshot';
import { loadSqlJs, type Database } from './sqlite';

export interface StoreOptions {
  home: string;
  wasmPath: string;
  modules: readonly StoreModule[];
  /** Journal bytes past the last checkpoint before an idle checkpoint is taken. */
  checkpointBytes?: number;
  /** Quiet time after the last write before that checkpoint runs, so it never sits in a write's path. */
  checkpointIdleMs?: number;
  /** Journal bytes past the last checkpoint that make `close()` write one. */
  closeCheckpointBytes?: number;
  now?: () => number;
}

/** What a write decides after seeing the latest state: the operation to journal, or none (a refusal). */
export type Decision<T> = { op: Operation; result: T } | { op?: undefined; result: T };

const OFFSET_KEY = 'journal_offset';
/** Journal lines skipped so far; kept in the database so the count survives checkpoints and restarts. */
const PROBLEMS_KEY = 'journal_problems';
const FILES = { snapshot: 'store.sqlite', journal: 'journal.jsonl', lock: 'journal.lock', blobs: 'blobs' } as const;

/**
 * The one owner of the database in this process. Writes go through `commit`: under the
 * cross-process lock it catches up with the journal, lets the caller decide on the latest
 * state, appends the operation with fsync, and applies it by the same replay path every
 * other process uses — so an acknowledged write is on disk and all processes converge.
 */
export class Store {
  readonly blobs: BlobStore;
  /** Things a person should hear about (a damaged snapshot set aside, unparseable journal lines). */
  readonly warnings: string[] = [];
  private offset = 0;
  private snapshotOffset = 0;
  private checkpointTimer: NodeJS.Timeout | undefined;
  private skippedLines = 0;
  /** The open batch transaction (see inBatch) and the callback that commits it. */
  private batchOpen = false;
  private batchCommit: NodeJS.Immediate | undefined;
  /** Bumped by every checkpoint, so a background one that finishes after a newer one is dropped. */
  private snapshotGeneration = 0;

  private constructor(
    private database: Database,
    private readonly journal: Journal,
    private readonly lock: FileLock,
    private readonly options: StoreOptions,
    readonly home: string,
  ) {
    this.blobs = new BlobStore(path.join(home, FILES.blobs));
    this.appliers = new Map(options.modules.flatMap((m) => Object.entries(m.appliers)));
  }

  private readonly appliers: Map<string, (db: Database, op: Operation) => void>;

  static async open(options: StoreOptions): Promise<Store> {
    const home = path.resolve(options.home);
    fs.mkdirSync(home, { recursive: true });
    // The wasm compiles while the snapshot is read and decompressed.
    const sqlJs = loadSqlJs(options.wasmPath);
    sqlJs.catch(() => undefined); // awaited (and reported) below, after the snapshot
    const journal = new Journal(path.join(home, FILES.journal));
    const snapshotFile = path.join(home, FILES.snapshot);
    const warnings: string[] = [];
    const now = options.now ?? Date.now;

    let bytes: Uint8Array | undefined;
    try {
      bytes = await readSnapshotAsync(snapshotFile);
    } catch (err) {
      if (!(err instanceof StoreCorruptError)) throw err;
      // The journal holds every operation from the start, so the state can be rebuilt; the
      // damaged file is kept for a person to inspect and is never overwritten.
      const aside = setAside(snapshotFile, now());
      warnings.push(`${err.message}. It was kept at ${aside} and the memory was rebuilt from the journal.`);
    }
    const SQL = await sqlJs;
    const db = bytes ? adoptDatabase(SQL, bytes) : new SQL.Database();
    tune(db);
    const store = new Store(db, journal, new FileLock(path.join(home, FILES.lock)), options, home);
    store.warnings.push(...warnings);
    try {
      migrate(db, options.modules);
      store.offset = Number(readMeta(db, OFFSET_KEY) ?? '0');
      store.skippedLines = Number(readMeta(db, PROBLEMS_KEY) ?? '0');
    } catch (err) {
      db.close();
      journal.close();
      throw new StoreCorruptError(`store snapshot ${snapshotFile} cannot be read: ${(err as Error).message}`, snapshotFile);
    }
    store.snapshotOffset = store.offset;
    const journalSize = journal.size();
    if (store.offset > journalSize) {
      db.close();
      journal.close();
      throw new StoreCorruptError(
        `journal ${journal.path} has ${journalSize} bytes but the snapshot already covers ${store.offset}: the journal was truncated or replaced. Nothing was changed; restore the journal or move the store aside.`,
        journal.path,
      );
    }
    store.refresh();
    return store;
  }

  /** The database, caught up with every other process's writes. */
  get db(): Database {
    this.refresh();
    return this.database;
  }

  get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * The journal position this process's database reflects: equal versions mean the same state,
   * so a reader may cache what it derived from the database under this key. Read it after `db`.
   */
  get version(): number {
    return this.offset;
  }

  get journalProblems(): number {
    return this.skippedLines;
  }

  /** Applies whatever other processes appended since we last looked. Cheap when nothing changed: one fstat. */
  refresh(): void {
    if (this.journal.size() <= this.offset) return;
    const db = this.database;
    this.inBatch(() => {
      this.offset = this.journal.readFrom(
        this.offset,
        (op) => this.applyOne(op),
        (problem) => {
          this.skippedLines++;
          this.warnings.push(`journal line at byte ${problem.offset} skipped: ${problem.reason}`);
        },
      );
      writeMeta(db, OFFSET_KEY, String(this.offset));
      writeMeta(db, PROBLEMS_KEY, String(this.skippedLines));
    });
  }

  /**
   * Runs `fn` all or nothing (a savepoint) inside the open batch transaction, opening one when
   * there is none. The database is in memory and never the durable copy (the journal is), so
   * committing after every operation buys nothing, while each COMMIT makes FTS4 flush its
   * pending terms into a new segment. The batch commits as soon as the event loop is free, and
   * before anything exports the database, so a bulk import pays for that once, not per file.
   */
  private inBatch(fn: () => void): void {
    const db = this.database;
    if (!this.batchOpen) {
      db.exec('BEGIN');
      this.batchOpen = true;
      this.batchCommit = setImmediate(() => this.commitBatch());
    }
    db.exec('SAVEPOINT batch');
    try {
      fn();
      db.exec('RELEASE batch');
    } catch (err) {
      db.exec('ROLLBACK TO batch');
      db.exec('RELEASE batch');
      throw err;
    }
  }

  private commitBatch(): void {
    if (this.batchCommit) clearImmediate(this.batchCommit);
    this.batchCommit = undefined;
    if (!this.batchOpen) return;
    this.batchOpen = false;
    this.database.exec('COMMIT');
  }

  /**
   * Applies the operation this process has just appended without reading it back: re-reading
   * and re-parsing our own line cost about a fifth of an import. The applier is the same one
   * replay uses, and ops are plain JSON data, so every process still applies the same thing.
   * When the journal held anything we had not read (a line torn by a crash), the ordinary
   * catch-up reads it all instead, so its problems are counted exactly as elsewhere.
   */
  private applyAppended(op: Operation, sizeBefore: number, written: number): void {
    if (sizeBefore !== this.offset) {
      this.refresh();
      return;
    }
    const db = this.database;
    try {
      this.inBatch(() => {
        this.applyOne(op);
        this.offset = sizeBefore + written;
        writeMeta(db, OFFSET_KEY, String(this.offset));
        writeMeta(db, PROBLEMS_KEY, String(this.skippedLines));
      });
    } catch (err) {
      this.offset = sizeBefore;
      throw err;
    }
  }

  /**
   * The only way to write. `decide` sees the latest state (every process's writes) and
   * returns the operation to record; the promise resolves once that operation is fsynced.
   * `durable: false` is for records nobody is told were kept (Recollect's log of its own tool
   * calls): the line is written without its own fsync and becomes durable with the next synced
   * append by any process, since fdatasync flushes the whole file. A crash before that can lose
   * only such lines, never an acknowledged write, and it halves the fsyncs of every tool call.
   */
  async commit<D extends Decision<unknown>>(decide: (db: Database) => D, options: { durable?: boolean } = {}): Promise<D['result']> {
    const result = await this.lock.withLock(() => {
      this.refresh();
      const decision = decide(this.database);
      if (decision.op) {
        const before = this.journal.size();
        const written = this.journal.append(decision.op, { sync: options.durable ?? true });
        this.applyAppended(decision.op, before, written);
      }
      return decision;
    });
    if (result.op) this.scheduleCheckpoint();
    return result.result;
  }

  /**
   * `commit` for a caller with more writes queued behind this one (an import of many files):
   * the operation is appended and applied under the lock exactly as by `commit`, but its fsync
   * runs on the thread pool while the caller prepares its next write; `synced` settles once the
   * line is on disk. The caller must not report the write as kept before `synced` resolves.
   */
  async commitSyncingInBackground<D extends Decision<unknown>>(decide: (db: Database) => D): Promise<{ result: D['result']; synced: Promise<void> }> {
    const result = await this.commit(decide, { durable: false });
    return { result, synced: this.journal.sync() };
  }

  /** Exports the database to the snapshot file so the next open replays only the journal's tail. */
  checkpoint(): void {
    this.refresh();
    if (this.offset === this.snapshotOffset) return;
    this.snapshotGeneration++;
    writeSnapshot(path.join(this.home, FILES.snapshot), this.exportDatabase());
    this.snapshotOffset = this.offset;
  }

  /**
   * The idle checkpoint: exported here, compressed off the event loop. A synchronous checkpoint
   * (close, rebuild) that lands meanwhile wins: the older export is then dropped, not renamed
   * over the newer file. Either file would be valid (each records the journal offset it covers);
   * this only keeps the newer one.
   */
  private async checkpointInBackground(): Promise<void> {
    this.refresh();
    if (this.offset === this.snapshotOffset) return;
    const generation = ++this.snapshotGeneration;
    const covered = this.offset;
    const data = this.exportDatabase();
    await writeSnapshotInBackground(path.join(this.home, FILES.snapshot), data, () => generation === this.snapshotGeneration);
    if (generation === this.snapshotGeneration) this.snapshotOffset = covered;
  }

  private exportDatabase(): Uint8Array {
    this.commitBatch();
    // sql.js export closes and reopens the connection; nothing else must hold statements now.
    const data = this.database.export();
    tune(this.database); // export() reopened the connection with default settings
    return data;
  }

  /**
   * Rebuilds the database (every table and search index) from the journal alone — the path
   * opening takes when the snapshot is damaged — and makes the result the new snapshot. Runs
   * under the lock, so no write lands half-way; on failure the old database stays in use.
   */
  async rebuild(): Promise<{ journalBytes: number; skippedLines: number }> {
    const SQL = await loadSqlJs(this.options.wasmPath);
    return this.lock.withLock(() => {
      this.commitBatch(); // the batch belongs to the database being replaced
      const old = { database: this.database, offset: this.offset, skipped: this.skippedLines };
      const fresh = new SQL.Database();
      tune(fresh);
      try {
        migrate(fresh, this.options.modules);
        this.database = fresh;
        this.offset = 0;
        this.skippedLines = 0;
        this.refresh();
      } catch (err) {
        if (this.batchCommit) clearImmediate(this.batchCommit);
        this.batchCommit = undefined;
        this.batchOpen = false; // it was the fresh database's, closed below
        this.database = old.database;
        this.offset = old.offset;
        this.skippedLines = old.skipped;
        fresh.close();
        throw err;
      }
      old.database.close();
      this.snapshotOffset = -1;
      this.checkpoint();
      return { journalBytes: this.offset, skippedLines: this.skippedLines };
    });
  }

  /**
   * Closes, checkpointing only when the journal tail has grown enough to slow the next open:
   * a short-lived CLI call must not rewrite a large snapshot for one line.
   */
  close(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    try {
      this.refresh();
      if (this.offset - this.snapshotOffset >= (this.options.closeCheckpointBytes ?? 1024 * 1024) || this.snapshotMissing()) this.checkpoint();
    } finally {
      this.commitBatch();
      this.database.close();
      this.journal.close();
    }
  }

  private snapshotMissing(): boolean {
    return this.offset > 0 && !fs.existsSync(path.join(this.home, FILES.snapshot));
  }

  private applyOne(op: Operation): void {
    const apply = this.appliers.get(op.op);
    if (!apply) {
      this.skippedLines++;
      this.warnings.push(`journal operation "${op.op}" is unknown to this build and was skipped`);
      return;
    }
    const db = this.database;
    db.exec('SAVEPOINT op');
    try {
      apply(db, op);
      db.exec('RELEASE op');
    } catch (err) {
      db.exec('ROLLBACK TO op');
      db.exec('RELEASE op');
      this.skippedLines++;
      this.warnings.push(`journal operation "${op.op}" failed to apply: ${(err as Error).message}`);
    }
  }

  private scheduleCheckpoint(): void {
    const threshold = this.options.checkpointBytes ?? 16 * 1024 * 1024;
    if (this.offset - this.snapshotOffset < threshold) return;
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      this.checkpointInBackground().catch((err: unknown) => this.warnings.push(`checkpoint failed: ${(err as Error).message}`));
    }, this.options.checkpointIdleMs ?? 2_000);
    this.checkpointTimer.unref();
  }
}

/**
 * sql.js's default page cache is 2 MB; common-word searches over a large index re-read the
 * same FTS segments, and a 64 MB cache cut their time by about a quarter in the bench.
 * The database lives in sql.js's in-memory file system and is never the durable copy (the
 * journal is), so its rollback journal can live in memory too: a small transaction took
 * 0.06 ms instead of 0.16 ms, and ROLLBACK and savepoints work the same.
 */
function tune(db: Database): void {
  db.exec('PRAGMA cache_size = -65536');
  db.exec('PRAGMA journal_mode = MEMORY');
}
