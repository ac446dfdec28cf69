import * as path from 'node:path';
import { SnapshotFormatError, StoreCorruptError } from './errors';
import { ANALYSIS_VERSION } from '../text/analyzer';
import { Journal, SEALED_DIR } from './journal';
import { ANALYSIS_KEY, migrate, readMeta, type StoreModule } from './schema';
import { DatabaseFile } from './databaseFile';
import { openSnapshot, setAside } from './snapshot';
import { loadSqlJs, tuneConnection as tune, type Database } from './sqlite';
import { memoryBudget } from './memoryBudget';
import { prepareHome } from './storeHome';
import { removeDeadTemps } from './strayTemps';

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
  /**
   * Time this process spent replaying journal lines its snapshot does not cover that makes
   * `close()` write one (default 250 ms): every later open would spend about as much again.
   */
  closeCheckpointReplayMs?: number;
  /** Journal bytes the snapshot covers past the live file's start before they are sealed (see journalSeal.ts). */
  sealBytes?: number;
  /** Delay after opening before sealing what the snapshot already covers (long-lived processes only: the timer never keeps a process alive). */
  sealDelayMs?: number;
  /** Decompress the rest of a paged snapshot in the background after opening (default true); tests of on-demand reads turn it off. */
  readAhead?: boolean;
  /** The compaction worker's bundle (default: compactWorker.js beside the wasm); without it compaction is off. */
  compactWorkerPath?: string;
  /** Compact after an idle checkpoint once the database has grown enough (compaction.ts); default true. */
  autoCompact?: boolean;
  /** Smallest database an idle checkpoint compacts (default 16 MB, compaction.ts). */
  compactMinBytes?: number;
  /**
   * Told how far a replay from the journal's start has come (a snapshot whose search indexes
   * another text analysis built, a rebuild): the journal bytes applied and all there are, at
   * most every 1% and at the end. The CLI prints it to stderr; the extension shows it. A
   * migration that fills a table from the rows (schema.ts) reports here too, naming what it does.
   */
  onReplayProgress?: (doneBytes: number, totalBytes: number, what?: string) => void;
  /** The `recollect.memory.budgetMb` setting; RECOLLECT_MEMORY_BUDGET_MB wins over it (memoryBudget.ts). */
  memoryBudgetMb?: number;
  now?: () => number;
}

export const STORE_FILES = { snapshot: 'store.sqlite', journal: 'journal.jsonl', lock: 'journal.lock', blobs: 'blobs' } as const;
/** The journal offset the database reflects, kept in its meta table so a snapshot says what it covers. */
export const OFFSET_KEY = 'journal_offset';
/** Journal lines skipped so far; kept in the database so the count survives checkpoints and restarts. */
export const PROBLEMS_KEY = 'journal_problems';
function analysisOf(db: Database): string | undefined {
  try {
    return readMeta(db, ANALYSIS_KEY);
  } catch {
    return undefined; // no meta table: nothing this build wrote
  }
}

/** What an open learned before it failed: damage found in the snapshot, and the file it reads. */
export interface OpenAttempt {
  damaged?: Error;
  dbFile?: DatabaseFile;
  /** Set once the store exists: damage found after that is its to handle. */
  onDamage?: (err: Error) => void;
}

/** A store's files opened and its database loaded from the snapshot, not yet caught up with the journal. */
export interface LoadedStore {
  home: string;
  db: Database;
  dbFile: DatabaseFile;
  journal: Journal;
  warnings: string[];
  /** False in a folder this process may not write (a read-only disk): reads work, every write is refused. */
  writable: boolean;
  offset: number;
  skippedLines: number;
  /** A migration changed a loaded snapshot: the next checkpoint must save it even with no new operation. */
  schemaUnsaved: boolean;
}

/**
 * Reads the snapshot (a damaged one is set aside: the journal holds every operation, so the
 * state is rebuilt from it), migrates it and checks that the journal still holds what it
 * covers. A chunk found damaged on the way is recorded in `attempt` (the caller sets the file
 * aside and opens again); `attempt.onDamage` hears of damage found later.
 */
export async function loadStore(options: StoreOptions, attempt: OpenAttempt): Promise<LoadedStore> {
  const home = path.resolve(options.home);
  const { writable } = prepareHome(home, STORE_FILES.journal);
  if (writable) {
    removeDeadTemps(home);
    removeDeadTemps(path.join(home, SEALED_DIR));
  }
  // The wasm compiles while the snapshot is read and decompressed.
  const sqlJs = loadSqlJs(options.wasmPath);
  sqlJs.catch(() => undefined); // awaited (and reported) below, after the snapshot
  const journal = new Journal(path.join(home, STORE_FILES.journal));
  const snapshotFile = path.join(home, STORE_FILES.snapshot);
  const warnings: string[] = [];
  let opened: Awaited<ReturnType<typeof openSnapshot>> | undefined;
  try {
    opened = await openSnapshot(snapshotFile);
  } catch (err) {
    if (!(err instanceof StoreCorruptError)) throw err;
    const aside = setAside(snapshotFile, (options.now ?? Date.now)(), err instanceof SnapshotFormatError ? 'old-format' : 'corrupt');
    warnings.push(`${err.message}. It was kept at ${aside} and the memory was rebuilt from the journal.`);
  }
  const budget = memoryBudget(options.memoryBudgetMb);
  const dbFile = DatabaseFile.prepare(snapshotFile, opened, (err) => (attempt.onDamage ? attempt.onDamage(err) : (attempt.damaged ??= err)), budget.chunkCacheBytes);
  attempt.dbFile = dbFile;
  // The worker decompresses the chunks the last process's first queries asked for while the wasm
  // compiles and the journal is replayed here, so this process's first query finds them ready.
  if (options.readAhead ?? true) void dbFile.startReadAhead().catch(() => undefined);
  let db = dbFile.adopt(await sqlJs);
  let dbFileNow = dbFile;
  // Search indexes hold the analyzed text (src/core/text/analyzer.ts): a snapshot built by
  // another analysis is rebuilt from the journal, as a missing one is, so old and new terms never mix.
  if (opened && analysisOf(db) !== ANALYSIS_VERSION) {
    warnings.push(`the snapshot's search indexes were built by text analysis ${analysisOf(db) ?? '(none)'}, this build uses ${ANALYSIS_VERSION}: the store was rebuilt from its journal`);
    db.close();
    dbFile.close();
    opened = undefined;
    dbFileNow = DatabaseFile.prepare(snapshotFile, undefined, (err) => (attempt.onDamage ? attempt.onDamage(err) : (attempt.damaged ??= err)), budget.chunkCacheBytes);
    attempt.dbFile = dbFileNow;
    db = dbFileNow.adopt(await sqlJs);
  }
  const reindexed = dbFileNow !== dbFile;
  try {
    tune(db, budget.sqliteCacheBytes);
    // A migration on an existing snapshot (a new index over a large store) must be saved, or
    // every open until the next checkpoint would run it again.
    const progress = options.onReplayProgress;
    const schemaUnsaved = (migrate(db, options.modules, progress && ((what, done, total) => progress(done, total, what))) > 0 && opened !== undefined) || reindexed;
    const offset = Number(readMeta(db, OFFSET_KEY) ?? '0');
    const skippedLines = Number(readMeta(db, PROBLEMS_KEY) ?? '0');
    const journalSize = journal.size();
    if (offset > journalSize) {
      throw new StoreCorruptError(
        `journal ${journal.path} has ${journalSize} bytes but the snapshot already covers ${offset}: the journal was truncated or replaced. Nothing was changed; restore the journal or move the store aside.`,
        journal.path,
      );
    }
    return { home, db, dbFile: dbFileNow, journal, warnings, writable, offset, skippedLines, schemaUnsaved };
  } catch (err) {
    db.close();
    journal.close();
    if (err instanceof StoreCorruptError) throw err;
    throw new StoreCorruptError(`store snapshot ${snapshotFile} cannot be read: ${(err as Error).message}`, snapshotFile);
  }
}
