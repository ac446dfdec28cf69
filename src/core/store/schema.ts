import { ANALYSIS_VERSION } from '../text/analyzer';
import { queryScalar, type Database } from './sqlite';
import type { Operation } from './journal';

/** How one aggregate applies a journal operation to the database. Must be deterministic. */
export type Applier = (db: Database, op: Operation) => void;

/**
 * What an aggregate (memory, history, chapters…) contributes to the store: its tables, as an
 * append-only list of migrations, and the operations it knows how to apply.
 */
export interface StoreModule {
  name: string;
  migrations: readonly Migration[];
  appliers: Readonly<Record<string, Applier>>;
}

/** The text analysis (ANALYSIS_VERSION) the database's search indexes were built with: a store opened with another is rebuilt from its journal (storeOpen.ts). */
export const ANALYSIS_KEY = 'text_analysis';

const CORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/**
 * One step of a module's schema: SQL, or SQL and then code that fills what it created from the
 * rows already there (derived data that SQL alone cannot compute), told how far it has come.
 */
export type Migration = string | { sql: string; fill: (db: Database, progress?: MigrationProgress) => void };

/** A long migration's progress: what it does, and how far it is (in its own units). */
export type MigrationProgress = (what: string, done: number, total: number) => void;

/** Brings every module's schema up to date; returns how many migrations ran. */
export function migrate(db: Database, modules: readonly StoreModule[], progress?: MigrationProgress): number {
  db.exec(CORE_SCHEMA);
  // A database that starts empty has its search indexes built by this build's text analysis.
  if (readMeta(db, ANALYSIS_KEY) === undefined && queryScalar(db, 'SELECT count(*) FROM meta') === 0) writeMeta(db, ANALYSIS_KEY, ANALYSIS_VERSION);
  let ran = 0;
  for (const mod of modules) {
    const key = `schema:${mod.name}`;
    const done = Number(readMeta(db, key) ?? '0');
    if (done > mod.migrations.length) {
      throw new Error(`store schema "${mod.name}" is at version ${done}, newer than this build knows (${mod.migrations.length}); update Recollect`);
    }
    for (let v = done; v < mod.migrations.length; v++) {
      db.exec('BEGIN');
      try {
        const step = mod.migrations[v] as Migration;
        db.exec(typeof step === 'string' ? step : step.sql);
        if (typeof step !== 'string') step.fill(db, progress);
        writeMeta(db, key, String(v + 1));
        db.exec('COMMIT');
        ran++;
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    }
  }
  return ran;
}

export function readMeta(db: Database, key: string): string | undefined {
  const stmt = db.prepare('SELECT value FROM meta WHERE key = ?');
  try {
    stmt.bind([key]);
    return stmt.step() ? String(stmt.get()[0]) : undefined;
  } finally {
    stmt.free();
  }
}

export function writeMeta(db: Database, key: string, value: string): void {
  db.run('INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [key, value]);
}
