import type { Database, SqlValue, Statement } from 'sql.js';

/**
 * Compiled statements kept per connection, for the searches that run the same few statements on
 * every call (search_text, chat_history's keyword search, lcm_grep): preparing an FTS4 statement
 * costs sql.js about as much as running it on a rare word.
 *
 * Why it is exact:
 * - keyed by the SQL text on one Database object: a reopened or swapped connection (checkpoint,
 *   compaction) is another object and starts empty; the old one's statements are freed by
 *   freeStatements before it closes (and sql.js's close frees every statement it still has);
 * - SQLite re-prepares a statement itself when the schema changed under it (prepare_v2);
 * - a statement is reset after every use, so none holds a read open between calls; sql.js 1.16's
 *   export() copies through the backup API and leaves statements alone (older versions closed
 *   and reopened the connection, freeing them);
 * - a statement in use (a nested call of the same SQL) is never handed out twice: the nested
 *   call gets a fresh one, freed after it.
 */

/** Enough for every shape of search statement a tool runs; the least recently used goes first. */
const MAX_STATEMENTS = 48;

interface Kept {
  stmts: Map<string, Statement>;
  busy: Set<string>;
}

const kept = new WeakMap<Database, Kept>();

/** Runs `use` on `sql` bound to `params`, with the connection's compiled statement when it has one. */
export function withCachedStatement<T>(db: Database, sql: string, params: SqlValue[] | null, use: (stmt: Statement) => T): T {
  let cache = kept.get(db);
  if (!cache) kept.set(db, (cache = { stmts: new Map(), busy: new Set() }));
  if (cache.busy.has(sql)) {
    const fresh = db.prepare(sql);
    try {
      if (params) fresh.bind(params);
      return use(fresh);
    } finally {
      fresh.free();
    }
  }
  let stmt = cache.stmts.get(sql);
  if (stmt) cache.stmts.delete(sql); // re-inserted below: Map order is recency order
  else stmt = db.prepare(sql);
  cache.stmts.set(sql, stmt);
  for (const [oldest, old] of cache.stmts) {
    if (cache.stmts.size <= MAX_STATEMENTS) break;
    if (cache.busy.has(oldest)) continue; // an outer call is still stepping it
    cache.stmts.delete(oldest);
    old.free();
  }
  cache.busy.add(sql);
  let failed = true;
  try {
    if (params) stmt.bind(params);
    const out = use(stmt);
    failed = false;
    return out;
  } finally {
    cache.busy.delete(sql);
    // A statement that failed (its table dropped or reshaped) is not kept: the next call compiles afresh.
    if (failed) {
      cache.stmts.delete(sql);
      stmt.free();
    } else stmt.reset();
  }
}

/** Frees every statement kept for `db`: before it closes or is replaced. */
export function freeStatements(db: Database): void {
  const cache = kept.get(db);
  if (!cache) return;
  kept.delete(db);
  for (const stmt of cache.stmts.values()) stmt.free();
}

/** How many statements `db` keeps (tests). */
export function keptStatementCount(db: Database): number {
  return kept.get(db)?.stmts.size ?? 0;
}
