import type { Database, Statement } from '../src/core/store/sqlite';
import { nowMs, table } from './stats';

/**
 * --diag: time spent in SQLite per statement text, by wrapping sql.js's Statement methods (the
 * CPU profiler sees SQLite only as anonymous wasm). Prepare (compiling) is counted apart from
 * running. Statements made through Database.exec (BEGIN, COMMIT…) are not seen.
 */
export function sqlProfile(db: Database): { stop: () => void; print: (top?: number) => void } {
  const probe = db.prepare('SELECT 1');
  const stmtProto = Object.getPrototypeOf(probe) as Record<string, (...args: unknown[]) => unknown>;
  probe.free();
  const dbProto = Object.getPrototypeOf(db) as Record<string, (...args: unknown[]) => unknown>;
  const keys = new WeakMap<object, string>();
  const totals = new Map<string, { ms: number; steps: number }>();
  const add = (key: string, ms: number, step: boolean) => {
    const t = totals.get(key) ?? { ms: 0, steps: 0 };
    t.ms += ms;
    if (step) t.steps++;
    totals.set(key, t);
  };
  const keyOf = (stmt: Statement) => {
    let k = keys.get(stmt);
    if (!k) {
      k = normalise(stmt.getSQL());
      keys.set(stmt, k);
    }
    return k;
  };
  const saved: [Record<string, (...args: unknown[]) => unknown>, string, (...args: unknown[]) => unknown][] = [];
  // run() and getAsObject() call bind/step/get through the prototype, so those three see everything.
  for (const name of ['bind', 'step', 'get']) {
    const orig = stmtProto[name];
    if (typeof orig !== 'function') continue;
    saved.push([stmtProto, name, orig]);
    stmtProto[name] = function (this: Statement, ...args: unknown[]) {
      const t = nowMs();
      try {
        return orig.apply(this, args);
      } finally {
        add(keyOf(this), nowMs() - t, name === 'step');
      }
    };
  }
  const prepare = dbProto.prepare;
  if (typeof prepare === 'function') {
    saved.push([dbProto, 'prepare', prepare]);
    dbProto.prepare = function (this: Database, ...args: unknown[]) {
      const t = nowMs();
      const stmt = prepare.apply(this, args);
      add(`(compile) ${normalise(String(args[0]))}`, nowMs() - t, false);
      return stmt;
    };
  }
  return {
    stop: () => {
      for (const [obj, name, fn] of saved) obj[name] = fn;
    },
    print: (top = 15) => {
      const all = [...totals.entries()];
      const run = all.filter(([k]) => !k.startsWith('(compile)')).reduce((a, [, v]) => a + v.ms, 0);
      const compile = all.filter(([k]) => k.startsWith('(compile)')).reduce((a, [, v]) => a + v.ms, 0);
      table(
        ['statement (bind + step + read rows)', 'steps', 'ms'],
        all.filter(([k]) => !k.startsWith('(compile)')).sort((a, b) => b[1].ms - a[1].ms).slice(0, top).map(([k, v]) => [k, v.steps, v.ms.toFixed(1)]),
      );
      console.log(`  all statements: running ${run.toFixed(1)} ms, compiling ${compile.toFixed(1)} ms`);
    },
  };
}

function normalise(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').replace(/(\?\s*,\s*){3,}\?/g, '?,…').trim();
  return s.length > 120 ? `${s.slice(0, 119)}…` : s;
}
