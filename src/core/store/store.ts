import { freeStatements } from './statementCache';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BlobStore } from './blobStore';
import { FileLock } from './fileLock';
import { WriteRefusedError } from './errors';
import { Journal, type Operation } from './journal';
import type { SealResult } from './journalSeal';
import type { Redact } from './journalSegments';
import { OperationAppliers } from './operationAppliers';
import { undoQuietly, type Decision } from './decision';
import { purgeJournal, type PurgeResult } from './journalPurge';
import { migrate, readMeta, writeMeta } from './schema';
import { loadStore, OFFSET_KEY, PROBLEMS_KEY, STORE_FILES as FILES, type OpenAttempt, type StoreOptions } from './storeOpen';
import { DatabaseFile } from './databaseFile';
import { BatchTransaction } from './batchTransaction';
import { SealScheduler } from './sealScheduler';
import { compactionPeakBytes, Compactor, type CompactResult } from './compaction';
import { openPagedFrame } from './pagedSnapshot';
import { loadSqlJs, queryScalar, sqliteHeapBytes, tuneConnection, type Database } from './sqlite';
import { BudgetShares, BUDGET_ENV, memoryBudget, type MemoryBudget } from './memoryBudget';
import { checkpointDue } from './memoryPressure';
import { memoryReport } from './memoryReport';

export type { StoreOptions } from './storeOpen';
export type { Decision } from './decision';

/** Below this, sealing saves too little to be worth a segment file (bench: 13.7 MB of journal → 4.5 MB). */
const SEAL_BYTES = 4 * 1024 * 1024;

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
  /** Time spent replaying other processes' lines since the snapshot last covered the journal (see close). */
  private replayMsUncovered = 0;
  private checkpointTimer: NodeJS.Timeout | undefined;
  private readonly batch = new BatchTransaction();
  /** The database's file in sql.js and the snapshot it reads from (set by open). */
  private dbFile!: DatabaseFile;
  private recovering = false;
  /** Bumped by every checkpoint, so a background one that finishes after a newer one is dropped. */
  private snapshotGeneration = 0;
  private readonly sealer: SealScheduler;
  /** A migration changed the schema since the snapshot was written: the next checkpoint writes it even with no new operation. */
  private schemaUnsaved = false;

  private constructor(
    private database: Database,
    private readonly journal: Journal,
    private readonly lock: FileLock,
    private readonly options: StoreOptions,
    readonly home: string,
    /** False on a read-only disk: reads work, writes are refused, and no checkpoint or seal is tried. */
    readonly writable: boolean,
  ) {
    this.blobs = new BlobStore(path.join(home, FILES.blobs));
    this.shares = new BudgetShares(memoryBudget(options.memoryBudgetMb), (bytes) => this.dbFile?.limitCache(bytes));
    this.ops = new OperationAppliers(options.modules, this.warnings);
    this.sealer = new SealScheduler(journal, lock, options.sealBytes ?? SEAL_BYTES, () => this.snapshotOffset, (w) => this.warnOnce(w));
    this.compactor = new Compactor({
      home,
      snapshotFile: path.join(home, FILES.snapshot),
      wasmPath: options.wasmPath,
      workerPath: options.compactWorkerPath ?? path.join(path.dirname(options.wasmPath), 'compactWorker.js'),
      minBytes: options.compactMinBytes,
      cacheBytes: this.budget.chunkCacheBytes,
      lock,
      now: () => this.now,
      swapped: () => this.reopenSnapshot(),
    });
  }

  private readonly compactor: Compactor;

  /** What this process may hold (memoryBudget.ts): the chunk cache, unsaved writes, SQLite's cache. */
  get budget(): MemoryBudget {
    return this.shares.budget;
  }

  private readonly shares: BudgetShares;

  /**
   * Memory `part` of this process holds outside the store (the embedding model's thread, the
   * vectors kept for ranking), or 0 when it let it go: the chunk cache gives up as much at once.
   */
  reserveMemory(part: string, bytes: number): void {
    this.shares.reserve(part, bytes);
  }

  /** Applies every operation, replayed or just written, and counts what it skipped. */
  private readonly ops: OperationAppliers;

  /**
   * Opens the store. A snapshot chunk found damaged while opening (the rest are checked as they
   * are read) sets the file aside and opens again, rebuilding from the journal as at any damage.
   */
  static async open(options: StoreOptions): Promise<Store> {
    const attempt: OpenAttempt = {};
    try {
      return await Store.openOnce(options, attempt);
    } catch (err) {
      if (!attempt.damaged || !attempt.dbFile) {
        attempt.dbFile?.close();
        throw err;
      }
      const warning = attempt.dbFile.setAsideDamaged(attempt.damaged, (options.now ?? Date.now)());
      attempt.dbFile.close();
      const store = await Store.openOnce(options, {});
      store.warnings.unshift(warning);
      return store;
    }
  }

  private static async openOnce(options: StoreOptions, attempt: OpenAttempt): Promise<Store> {
    const loaded = await loadStore(options, attempt);
    const { db, journal, dbFile } = loaded;
    const store = new Store(db, journal, new FileLock(path.join(loaded.home, FILES.lock)), options, loaded.home, loaded.writable);
    store.dbFile = dbFile;
    store.warnings.push(...loaded.warnings);
    store.schemaUnsaved = loaded.schemaUnsaved;
    store.offset = store.snapshotOffset = loaded.offset;
    store.ops.skipped = loaded.skippedLines;
    try {
      store.refresh();
    } catch (err) {
      // A sealed segment the replay needs is missing or damaged: refuse to open, change nothing.
      store.commitBatch();
      db.close();
      journal.close();
      dbFile.close();
      throw err;
    }
    attempt.onDamage = (err) => store.snapshotDamaged(err);
    if (attempt.damaged) store.snapshotDamaged(attempt.damaged);
    // The rest of the snapshot is decompressed (and checked) on the thread pool while queries run.
    if (options.readAhead ?? true) void dbFile.readAhead().catch(() => undefined);
    if (store.writable) store.sealer.sealLater(options.sealDelayMs ?? 30_000);
    if (store.schemaUnsaved) store.scheduleCheckpoint();
    return store;
  }

  /**
   * A snapshot chunk failed its check after the open (SQLite got an I/O error, never the bytes):
   * the file is set aside and the database rebuilt from the journal.
   */
  private snapshotDamaged(err: Error): void {
    if (this.recovering) return;
    this.recovering = true;
    setImmediate(() => {
      this.warnings.push(this.dbFile.setAsideDamaged(err, this.now));
      this.rebuild()
        .catch((e: unknown) => this.warnings.push(`rebuilding after a damaged snapshot failed: ${(e as Error).message}`))
        .finally(() => (this.recovering = false));
    });
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

  /** How much of a paged snapshot this process has read and written (the bench reports it). */
  get fileStats(): DatabaseFile['stats'] {
    return this.dbFile.stats;
  }

  get journalProblems(): number {
    return this.ops.skipped;
  }

  /**
   * Reads the journal's operations from `offset` (0, or an offset this returned) without applying
   * them, and returns the offset it read to: the team pool pushes this machine's writes from here.
   */
  readOperations(offset: number, onOp: (op: Operation, endOffset: number) => void): number {
    return this.journal.readFrom(offset, onOp, () => undefined);
  }

  /** Applies whatever other processes appended since we last looked. Cheap when nothing changed: one stat (which also notices a sealed, replaced journal file). */
  refresh(): void {
    this.dbFile.takeReadAhead();
    if (this.journal.unchangedSince(this.offset)) return;
    const db = this.database;
    const started = performance.now();
    this.batch.run(db, () => {
      this.offset = this.ops.replay(this.journal, db, this.offset, (end) => this.underPressure(end) && this.checkpointMidReplay(end), this.options.onReplayProgress);
      writeMeta(db, OFFSET_KEY, String(this.offset));
      writeMeta(db, PROBLEMS_KEY, String(this.ops.skipped));
    });
    this.replayMsUncovered += performance.now() - started;
  }

  private commitBatch(): void {
    this.batch.commit(this.database);
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
      this.batch.run(db, () => {
        this.ops.apply(this.database, op);
        this.offset = sizeBefore + written;
        writeMeta(db, OFFSET_KEY, String(this.offset));
        writeMeta(db, PROBLEMS_KEY, String(this.ops.skipped));
      });
    } catch (err) {
      this.offset = sizeBefore;
      throw err;
    }
  }

  /**
   * The only way to write. `decide` sees the latest state (every process's writes) and
   * returns the operation to record; the promise resolves once that operation is fsynced.
   * `durable: false` writes the line without its own fsync (commitSyncingInBackground syncs it
   * while the caller prepares its next write); it becomes durable with the next synced append by
   * any process, since fdatasync flushes the whole file. The caller must not report it as kept
   * before then.
   */
  async commit<D extends Decision<unknown>>(decide: (db: Database) => D, options: { durable?: boolean } = {}): Promise<D['result']> {
    const result = await this.lock.withLock(() => {
      this.refresh();
      const decision = decide(this.database);
      if (decision.op) {
        const before = this.journal.size();
        let written: number;
        try {
          written = this.journal.append(decision.op, { sync: options.durable ?? true });
        } catch (err) {
          undoQuietly(decision.undo);
          throw err;
        }
        this.applyAppended(decision.op, before, written);
      }
      return decision;
    });
    if (result.op) {
      if (this.underPressure(this.offset)) this.checkpointUnderPressure();
      this.scheduleCheckpoint();
    }
    return result.result;
  }

  /**
   * Between two operations of a bulk write, with the journal applied up to `at`: spills written
   * chunks past their share of the budget, and says whether a checkpoint is due on the spot
   * (memoryPressure.ts).
   */
  private underPressure(at: number): boolean {
    this.shares.countSqliteHeap(sqliteHeapBytes());
    if (!this.writable || this.ops.sawUnknownOp) return false;
    const due = checkpointDue(this.budget, this.dbFile, at - this.snapshotOffset, () => this.databaseBytes());
    const failed = this.dbFile.spillFailure;
    if (failed) this.warnOnce(`written database chunks could not be spilled to disk (${failed.message}); they stay in memory until a checkpoint`);
    return due;
  }

  /**
   * A checkpoint now, on this thread, in a bulk write (memoryPressure.ts says when): afterwards
   * the written chunks are the new snapshot's, clean and evictable. The journal is flushed first:
   * an import's lines may still wait for their background fdatasync, and a snapshot must never
   * cover a line the disk could still lose.
   */
  private checkpointUnderPressure(): void {
    this.journal.syncNow();
    this.checkpoint();
    this.pressureCheckpoints++;
  }

  /** Inside a replay (refresh): commits what was applied up to `covered` and saves it the same way, then replays on. */
  private checkpointMidReplay(covered: number): void {
    const db = this.database;
    writeMeta(db, OFFSET_KEY, String(covered));
    writeMeta(db, PROBLEMS_KEY, String(this.ops.skipped));
    this.batch.commitMidway(db, () => {
      this.journal.syncNow();
      this.snapshotGeneration++;
      this.dbFile.writeSync(db, () => this.exportDatabase());
      this.snapshotOffset = covered;
      this.schemaUnsaved = false;
      this.pressureCheckpoints++;
    });
  }

  /** Checkpoints taken because unsaved writes filled their share of the budget. */
  private pressureCheckpoints = 0;

  /** memory_status's `memory` (memoryReport.ts). */
  memoryStatus() {
    this.shares.countSqliteHeap(sqliteHeapBytes());
    return memoryReport(this.budget, this.dbFile, this.pressureCheckpoints, this.compactionSkipped, this.shares.reserved);
  }

  /** Why the last compaction due was not run (it would not fit the budget), for memory_status. */
  private compactionSkipped: string | undefined;

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

  /**
   * Runs `fn` under the cross-process lock on the caught-up database, for work that must not
   * interleave with any process's write but journals nothing (deleting blob files no row names).
   */
  exclusive<T>(fn: (db: Database) => T): Promise<T> {
    return this.lock.withLock(() => {
      this.refresh();
      return fn(this.database);
    });
  }

  /**
   * Rewrites the journal's lines before `upTo` (the end of the operation that asked for it) through
   * `redact`, in sealed segments and the live file, without moving any offset (journalPurge.ts).
   */
  async purgeJournal(redact: Redact, upTo: number): Promise<PurgeResult> {
    const result = await purgeJournal({
      journalPath: this.journal.path,
      sealedDir: this.journal.sealedDir,
      lock: this.lock,
      upTo,
      redact,
    });
    this.refresh(); // moves this process to the rewritten file
    return result;
  }

  /** Whether a checkpoint can be written now (not after a line of a newer build was skipped). */
  get canCheckpoint(): boolean {
    return !this.ops.sawUnknownOp;
  }

  /** Exports the database to the snapshot file so the next open replays only the journal's tail. */
  checkpoint(): void {
    this.refresh();
    if (this.ops.sawUnknownOp || (this.offset === this.snapshotOffset && !this.schemaUnsaved)) return;
    this.snapshotGeneration++;
    this.commitBatch();
    this.dbFile.writeSync(this.database, () => this.exportDatabase());
    this.snapshotOffset = this.offset;
    this.replayMsUncovered = 0;
    this.schemaUnsaved = false;
  }

  /**
   * The idle checkpoint: exported here, compressed off the event loop. A synchronous checkpoint
   * (close, rebuild) that lands meanwhile wins: the older export is then dropped, not renamed
   * over the newer file. Either file would be valid (each records the journal offset it covers);
   * this only keeps the newer one.
   */
  private async checkpointInBackground(): Promise<void> {
    this.refresh();
    if (this.ops.sawUnknownOp || (this.offset === this.snapshotOffset && !this.schemaUnsaved)) return;
    const generation = ++this.snapshotGeneration;
    const covered = this.offset;
    this.commitBatch();
    this.backgroundCheckpoints++;
    try {
      await this.dbFile.writeInBackground(this.database, () => this.exportDatabase(), () => generation === this.snapshotGeneration);
    } finally {
      this.backgroundCheckpoints--;
    }
    if (generation === this.snapshotGeneration) {
      this.snapshotOffset = covered;
      this.replayMsUncovered = 0; // what landed meanwhile was most likely this process's own writes
      this.schemaUnsaved = false;
    }
    this.sealer.sealInBackground();
    if ((this.options.autoCompact ?? true) && this.compactor.due(this.databaseBytes())) void this.compact(true).catch(() => undefined);
  }

  /**
   * Rewrites the snapshot in table order in a child process (compaction.ts), so a fresh process's first
   * query reads a few contiguous chunks instead of most of the file; then reads on from it.
   * An awaited call keeps the process alive until it is done; a `background` one (after an idle
   * checkpoint) never does.
   */
  async compact(background = false): Promise<CompactResult> {
    const needed = compactionPeakBytes(this.budget.chunkCacheBytes);
    if (needed > this.budget.budgetBytes) {
      const MB = 1024 * 1024;
      this.compactionSkipped = `not run: compacting needs about ${Math.round(needed / MB)} MB in its process (Node, sql.js and its chunk cache), over the ${Math.round(this.budget.budgetBytes / MB)} MB memory budget (${BUDGET_ENV} or recollect.memory.budgetMb); the store works the same without it, a fresh process's first search reads more of the snapshot`;
      this.warnOnce(`compaction ${this.compactionSkipped}`);
      return { ok: false, reason: `compaction ${this.compactionSkipped}`, wallMs: 0 };
    }
    const result = await this.compactor.compact(background);
    if (!result.ok && result.reason.startsWith('compaction failed')) this.warnOnce(result.reason);
    // The checkpoint that superseded the copy found this compaction running and so started none;
    // with no later checkpoint (an idle store) nothing else would ever try again.
    if (!result.ok && result.superseded && background && this.compactor.due(this.databaseBytes())) void this.compact(true).catch(() => undefined);
    return result;
  }

  private databaseBytes(): number {
    return Number(queryScalar(this.database, 'PRAGMA page_count')) * Number(queryScalar(this.database, 'PRAGMA page_size'));
  }

  /**
   * Under the lock, after the compacted file replaced the snapshot: this process reads from it
   * too (its own next checkpoint would otherwise write the old layout back), replaying the
   * journal past the offset it covers, as an open does. On failure the old database stays.
   */
  private async reopenSnapshot(): Promise<void> {
    const SQL = await loadSqlJs(this.options.wasmPath);
    this.refresh();
    this.commitBatch();
    const file = path.join(this.home, FILES.snapshot);
    const opened = { paged: openPagedFrame(file, fs.openSync(file, 'r')) };
    const { db, dbFile } = DatabaseFile.open(SQL, file, opened, (err) => this.snapshotDamaged(err), this.budget.chunkCacheBytes);
    this.snapshotGeneration++; // a background checkpoint of the old database must not land
    this.replaceDatabase(db, dbFile);
    this.snapshotOffset = Number(readMeta(db, OFFSET_KEY) ?? '0');
    this.commitBatch();
    if (this.options.readAhead ?? true) void dbFile.readAhead().catch(() => undefined);
  }

  /**
   * Makes `db` this process's database (a compacted snapshot, or an empty one to replay the whole
   * journal into) and catches it up from the offset it records; on failure the old one stays.
   */
  private replaceDatabase(db: Database, dbFile?: DatabaseFile): void {
    const old = { database: this.database, dbFile: this.dbFile, offset: this.offset, schemaUnsaved: this.schemaUnsaved };
    const oldSkipped = this.ops.skipped;
    try {
      tuneConnection(db, this.budget.sqliteCacheBytes);
      this.schemaUnsaved = migrate(db, this.options.modules) > 0 || this.schemaUnsaved;
      this.database = db;
      if (dbFile) this.dbFile = dbFile;
      this.offset = Number(readMeta(db, OFFSET_KEY) ?? '0');
      this.ops.skipped = Number(readMeta(db, PROBLEMS_KEY) ?? '0');
      this.refresh();
    } catch (err) {
      this.batch.forget(); // it was the new database's, closed below
      Object.assign(this, old);
      this.ops.skipped = oldSkipped;
      db.close();
      dbFile?.close();
      throw err;
    }
    try {
      freeStatements(old.database);
      old.database.close();
    } catch {
      // A damaged file can fail the rollback on close; that database is dropped anyway.
    }
    if (dbFile) old.dbFile.close();
  }

  /**
   * Moves the journal prefix that the snapshot this process wrote covers into a compressed
   * segment, once it is at least `sealBytes` long; compression runs on the thread pool and the
   * lock is held only for the swap. Ordinary opens never read segments (the snapshot covers
   * them); replays from further back (a rebuild, a lost snapshot) do. Resolves to what was sealed.
   */
  sealJournal(): Promise<SealResult | undefined> {
    return this.sealer.seal();
  }

  private exportDatabase(): Uint8Array {
    this.commitBatch();
    // sql.js export closes and reopens the connection; nothing else must hold statements now.
    const data = this.database.export();
    tuneConnection(this.database, this.budget.sqliteCacheBytes); // export() reopened the connection with default settings
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
      try {
        this.commitBatch(); // the batch belongs to the database being replaced
      } catch {
        // It cannot commit when its file is damaged; it is replaced either way.
      }
      // A paged database of new chunks, so the replay is bounded by checkpoints under pressure as an import is.
      const dbFile = DatabaseFile.prepare(path.join(this.home, FILES.snapshot), undefined, (err) => this.snapshotDamaged(err), this.budget.chunkCacheBytes);
      this.replaceDatabase(dbFile.adopt(SQL), dbFile);
      this.snapshotOffset = -1;
      this.checkpoint();
      return { journalBytes: this.offset, skippedLines: this.ops.skipped };
    });
  }

  /** Runs `fn` first thing when the store closes (a background job that must stop using it). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  private readonly closers: (() => void)[] = [];
  /** Idle checkpoints writing their file now. */
  private backgroundCheckpoints = 0;

  /**
   * Closes, checkpointing only when the journal tail has grown enough to slow the next open:
   * a short-lived CLI call must not rewrite a large snapshot for one line. Bytes alone misjudge
   * it: on the 200 MB bench store, 846 KB of remembered notes (under the 1 MB bound) took ~0.8 s
   * to replay at every open, and one checkpoint at close (~0.8 s) brought opens back to ~0.1 s.
   * So a tail that took this process long to replay is written too.
   */
  close(): void {
    for (const fn of this.closers.splice(0)) fn();
    this.sealer.close();
    this.compactor.close();
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    try {
      this.refresh();
      const slowTail = this.replayMsUncovered > 0 && this.replayMsUncovered >= (this.options.closeCheckpointReplayMs ?? 250);
      // An idle checkpoint still writing cannot finish once the file it copies unchanged chunks from is closed: this one replaces it.
      const due = this.offset - this.snapshotOffset >= (this.options.closeCheckpointBytes ?? 1024 * 1024) || slowTail || this.snapshotMissing() || this.schemaUnsaved || this.backgroundCheckpoints > 0;
      if (due && this.writable) this.checkpointIfRoom();
    } finally {
      this.commitBatch();
      freeStatements(this.database);
      this.database.close();
      this.journal.close();
      this.dbFile.close();
    }
  }

  /**
   * The checkpoint at close only saves the next open time: the journal holds every operation.
   * On a full disk it is refused (its temp file already removed) and the old snapshot stays.
   */
  private checkpointIfRoom(): void {
    try {
      this.checkpoint();
    } catch (err) {
      if (!(err instanceof WriteRefusedError)) throw err;
      this.warnOnce(`no checkpoint was written at close: ${err.problem}`);
    }
  }

  private snapshotMissing(): boolean {
    return this.offset > 0 && !fs.existsSync(path.join(this.home, FILES.snapshot));
  }

  private warnOnce(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  private scheduleCheckpoint(): void {
    if (!this.writable) return;
    const threshold = this.options.checkpointBytes ?? 16 * 1024 * 1024;
    if (this.offset - this.snapshotOffset < threshold && !this.schemaUnsaved) return;
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      this.checkpointInBackground().catch((err: unknown) => this.warnings.push(`checkpoint failed: ${(err as Error).message}`));
    }, this.options.checkpointIdleMs ?? 2_000);
    this.checkpointTimer.unref();
  }
}
