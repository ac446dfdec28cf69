// The few better-sqlite3 calls the benchmark makes (the package ships no types and @types is not installed).
declare module 'better-sqlite3' {
  export interface Statement {
    run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
    pluck(on?: boolean): Statement;
    raw(on?: boolean): Statement;
  }
  export interface Database {
    prepare(sql: string): Statement;
    exec(sql: string): Database;
    pragma(sql: string, opts?: { simple?: boolean }): unknown;
    transaction<F extends (...args: never[]) => unknown>(fn: F): F;
    close(): void;
  }
  interface DatabaseConstructor {
    new (file: string, options?: Record<string, unknown>): Database;
  }
  const Database: DatabaseConstructor;
  export default Database;
}
