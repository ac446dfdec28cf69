import type { Operation } from '../store/journal';
import type { Applier, StoreModule } from '../store/schema';
import { queryRows, queryScalar, type Database } from '../store/sqlite';

/** One operation another machine pushed to the pool, as the pool numbered it. */
export interface PulledOperation {
  /** The pool's idempotent operation id (poolOperationId). */
  id: string;
  seq: number;
  /** The pushing machine's pool identity. */
  origin: string;
  op: Operation;
}

/**
 * A batch of other machines' operations, journaled here before it is applied, so a pull is as
 * durable and replayable as a local write. The inner operations go through the same appliers
 * the journal replay uses; one already applied (by id) is skipped, so none lands twice.
 */
export interface PoolPulled extends Operation {
  op: 'pool.pulled';
  team: string;
  /** The pool's sequence this batch reaches: the next pull asks for what comes after it. */
  upTo: number;
  ops: PulledOperation[];
}

const MIGRATIONS = [
  `
  CREATE TABLE pool_applied (op_id TEXT PRIMARY KEY, team TEXT NOT NULL, seq INTEGER NOT NULL, origin TEXT NOT NULL);
  CREATE TABLE pool_cursor (team TEXT PRIMARY KEY, pulled_seq INTEGER NOT NULL);
  `,
];

export function pulledSeq(db: Database, team: string): number {
  return Number(queryScalar(db, 'SELECT pulled_seq FROM pool_cursor WHERE team = ?', [team]) ?? 0);
}

/** Which of `ids` this store has applied already (one query per 500 ids). */
export function appliedAmong(db: Database, ids: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    for (const r of queryRows(db, `SELECT op_id FROM pool_applied WHERE op_id IN (${part.map(() => '?').join(',')})`, part)) found.add(String(r.op_id));
  }
  return found;
}

export function appliedCount(db: Database, team: string): number {
  return Number(queryScalar(db, 'SELECT count(*) FROM pool_applied WHERE team = ?', [team]) ?? 0);
}

/**
 * The pool's store module. It takes the other modules because a pulled operation is applied by
 * whichever of them owns it, exactly as if it had been read from this machine's journal.
 */
export function poolModule(modules: readonly StoreModule[]): StoreModule {
  let appliers: Map<string, Applier> | undefined;
  const applierFor = (name: string) => (appliers ??= new Map(modules.flatMap((m) => Object.entries(m.appliers)))).get(name);
  const applyPulled = (db: Database, op: Operation) => {
    const batch = op as PoolPulled;
    const seen = appliedAmong(db, batch.ops.map((o) => o.id));
    const record = db.prepare('INSERT INTO pool_applied(op_id, team, seq, origin) VALUES (?, ?, ?, ?)');
    try {
      for (const pulled of batch.ops) {
        if (seen.has(pulled.id)) continue;
        seen.add(pulled.id);
        const apply = applierFor(pulled.op.op);
        // An operation this build does not know (a newer member's) or that fails here is still
        // recorded as seen: retrying it at every pull would change nothing.
        if (apply) {
          db.exec('SAVEPOINT pulled');
          try {
            apply(db, pulled.op);
            db.exec('RELEASE pulled');
          } catch {
            db.exec('ROLLBACK TO pulled');
            db.exec('RELEASE pulled');
          }
        }
        record.run([pulled.id, batch.team, pulled.seq, pulled.origin]);
      }
    } finally {
      record.free();
    }
    db.run('INSERT INTO pool_cursor(team, pulled_seq) VALUES (?, ?) ON CONFLICT(team) DO UPDATE SET pulled_seq = max(pulled_seq, excluded.pulled_seq)', [batch.team, batch.upTo]);
  };
  return { name: 'pool', migrations: MIGRATIONS, appliers: { 'pool.pulled': applyPulled } };
}
