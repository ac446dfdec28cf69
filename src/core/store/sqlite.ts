import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import initSqlJs, { type Database, type SqlJsStatic, type SqlValue, type Statement } from 'sql.js';

export type { Database, SqlValue, Statement, BindParams } from 'sql.js';

const loaded = new Map<string, Promise<SqlJsStatic>>();
/** The wasm memory of each sql.js loaded: SQLite's heap, which grows and never shrinks. */
const heaps: WebAssembly.Memory[] = [];

/** Loads the sql.js wasm once per process; the caller says where the wasm lives (dist/ or node_modules). */
export function loadSqlJs(wasmPath: string): Promise<SqlJsStatic> {
  let p = loaded.get(wasmPath);
  if (!p) {
    // Handing sql.js the bytes avoids its fetch/locateFile guesswork inside bundles; instantiating
    // them here (Emscripten's `instantiateWasm` hook) is how the heap's size can be known at all.
    const wasmBinary = fs.readFileSync(wasmPath);
    const instantiateWasm = (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) => {
      void WebAssembly.instantiate(wasmBinary, imports).then(({ instance }) => {
        const memory = Object.values(instance.exports).find((e): e is WebAssembly.Memory => e instanceof WebAssembly.Memory);
        if (memory) heaps.push(memory);
        receive(instance);
      });
      return {};
    };
    p = initSqlJs({ instantiateWasm } as Parameters<typeof initSqlJs>[0]);
    loaded.set(wasmPath, p);
  }
  return p;
}

/**
 * Bytes of sql.js's wasm heap in this process: SQLite's page cache, its in-memory rollback
 * journal and whatever a statement needed at its peak (an FTS4 segment merge holds a frequent
 * term's whole doclist). The heap only grows, so this is resident memory the budget must count.
 */
export function sqliteHeapBytes(): number {
  return heaps.reduce((sum, m) => sum + m.buffer.byteLength, 0);
}

/**
 * How V8 compiles sql.js's wasm, set by a process that owns its V8 (the CLI) before the store
 * opens. V8 compiles wasm with its baseline compiler (Liftoff) and recompiles hot functions with
 * its optimizing one (TurboFan) on background threads, by default on every thread V8 has.
 * SQLite's hot functions are large: on a 2-core machine those recompiles take the cores the first
 * query and the snapshot read-ahead worker need. Measured on the 200 MB bench store (open + first
 * search_text, fresh processes): ~190–230 ms by default, ~140 ms with one recompile thread, ~115–
 * 160 ms with the baseline compiler only.
 * - 'one-shot' (answers one call and exits: `recollect tool`): no optimizing recompiles at all;
 *   the process exits before they would pay back, and steady-state queries would run ~1.5×
 *   slower, which a one-shot process never reaches.
 * - 'server' (long-lived: `recollect mcp`, `recollect serve`): recompiles on one thread, so the
 *   optimized code still arrives, a little later.
 * The extension host is VS Code's process, shared with other extensions: it keeps V8's defaults.
 * Flags are process-wide and fixed for a module once it is compiled, hence before the load.
 */
export function setWasmCompilation(kind: 'one-shot' | 'server'): void {
  if (loaded.size) throw new Error('setWasmCompilation must run before sql.js is loaded');
  v8.setFlagsFromString(kind === 'one-shot' ? '--liftoff-only' : '--wasm-num-compilation-tasks=1');
}

/** The statements kept by `withPreparedStatements` while it runs, per database. */
const keptStatements = new WeakMap<Database, Map<string, Statement>>();

/**
 * Runs `fn` with every statement that queryRows, queryArrays, queryScalar and runSql prepare
 * kept for reuse, and frees them when `fn` returns: for many operations applied at once (a
 * pulled batch), where preparing a statement costs about as much as running it. Statements are
 * otherwise never kept because sql.js export() frees them; `fn` is synchronous and nothing
 * inside an applier exports. Nested calls share the outer scope.
 */
export function withPreparedStatements<T>(db: Database, fn: () => T): T {
  if (keptStatements.has(db)) return fn();
  const kept = new Map<string, Statement>();
  keptStatements.set(db, kept);
  try {
    return fn();
  } finally {
    keptStatements.delete(db);
    for (const stmt of kept.values()) stmt.free();
  }
}

/** Runs `use` on a bound statement: a kept one (reset afterwards) inside withPreparedStatements, else a fresh one (freed). */
function withStatement<T>(db: Database, sql: string, params: SqlValue[], use: (stmt: Statement) => T): T {
  const kept = keptStatements.get(db);
  let stmt = kept?.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    kept?.set(sql, stmt);
  }
  try {
    stmt.bind(params);
    return use(stmt);
  } finally {
    if (kept) stmt.reset();
    else stmt.free();
  }
}

/** Runs a query and returns its rows as objects. */
export function queryRows(db: Database, sql: string, params: SqlValue[] = []): Record<string, SqlValue>[] {
  return withStatement(db, sql, params, (stmt) => {
    const rows: Record<string, SqlValue>[] = [];
    while (stmt.step()) rows.push(stmt.getAsObject());
    return rows;
  });
}

/** `queryRows` with each row as an array of its columns, for large results: an object per row costs more than the row. */
export function queryArrays(db: Database, sql: string, params: SqlValue[] = []): SqlValue[][] {
  return withStatement(db, sql, params, (stmt) => {
    const rows: SqlValue[][] = [];
    while (stmt.step()) rows.push(stmt.get());
    return rows;
  });
}

/** The first column of the first row, or undefined when there is none. */
export function queryScalar(db: Database, sql: string, params: SqlValue[] = []): SqlValue | undefined {
  return withStatement(db, sql, params, (stmt) => (stmt.step() ? stmt.get()[0] : undefined));
}

/** One statement with parameters, run for its effect (db.run, with the statement kept inside withPreparedStatements). */
export function runSql(db: Database, sql: string, params: SqlValue[] = []): void {
  withStatement(db, sql, params, (stmt) => stmt.step());
}

/** Builds a WHERE clause from optional conditions, keeping each clause beside its parameters. */
export class Conditions {
  readonly clauses: string[] = [];
  readonly params: SqlValue[] = [];

  constructor(clause?: string, ...params: SqlValue[]) {
    if (clause) this.add(clause, ...params);
  }

  add(clause: string, ...params: SqlValue[]): this {
    this.clauses.push(clause);
    this.params.push(...params);
    return this;
  }

  /** Adds the clause only when the value is given. */
  addIf(value: SqlValue | undefined, clause: string): this {
    return value === undefined ? this : this.add(clause, value);
  }

  get sql(): string {
    return this.clauses.join(' AND ') || '1 = 1';
  }
}

/**
 * sql.js's default page cache is 2 MB; common-word searches over a large index re-read the
 * same FTS segments, and a 64 MB cache cut their time by about a quarter in the bench. The cache
 * lives in sql.js's wasm heap, which never shrinks, so it is the memory budget's share of it
 * (memoryBudget.ts: 64 MB from a 1.25 GB budget, 25 MB at the default 512 MB). Temporary tables
 * and sorts stay in memory too (temp_store = MEMORY): spilled to a temp "file" they would land in
 * sql.js's in-memory file system, which grows a file by copying it whole, and no query of the
 * store sorts more than a page of hits (the search tools cap `top_k`).
 * The database lives in sql.js's in-memory file system and is never the durable copy (the
 * journal is), so its rollback journal can live in memory too: a small transaction took
 * 0.06 ms instead of 0.16 ms, and ROLLBACK and savepoints work the same. No other connection
 * ever opens that file, so the connection keeps its lock instead of taking and checking it
 * around every statement: 19–33 µs per statement became 3 µs (a search runs several).
 */
export function tuneConnection(db: Database, cacheBytes = 64 * 1024 * 1024): void {
  db.exec(`PRAGMA cache_size = -${Math.max(1024, Math.floor(cacheBytes / 1024))}`);
  db.exec('PRAGMA temp_store = MEMORY');
  // What a row held is zeroed in the pages SQLite writes anyway; the pages it frees are zeroed
  // before a snapshot is written (freePages.ts), not inside the transaction, whose in-memory
  // journal would keep a copy of each. So no snapshot carries text a person forgot, or an older
  // copy of any row.
  db.exec('PRAGMA secure_delete = FAST');
  db.exec('PRAGMA journal_mode = MEMORY');
  db.exec('PRAGMA locking_mode = EXCLUSIVE');
}
