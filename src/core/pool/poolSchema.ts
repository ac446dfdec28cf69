import type { Operation } from '../store/journal';
import type { Applier, StoreModule } from '../store/schema';
import { queryScalar, runSql, withPreparedStatements, type Database } from '../store/sqlite';

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

/** Which of `ids` this store has applied already (one look-up of a kept statement each: a list of 500 placeholders cost more to prepare than 500 look-ups). */
export function appliedAmong(db: Database, ids: readonly string[]): Set<string> {
  const found = new Set<string>();
  withPreparedStatements(db, () => {
    for (const id of ids) if (queryScalar(db, 'SELECT 1 FROM pool_applied WHERE op_id = ?', [id]) !== undefined) found.add(id);
  });
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
    withPreparedStatements(db, () => {
      const seen = appliedAmong(db, batch.ops.map((o) => o.id));
      const fresh: PulledOperation[] = [];
      for (const pulled of batch.ops) {
        if (seen.has(pulled.id)) continue;
        seen.add(pulled.id);
        fresh.push(pulled);
      }
      // All of them under one savepoint first: a savepoint per operation cost about a tenth of
      // the pull. Only a batch in which one fails is applied again one by one, each in a
      // savepoint of its own, so exactly the failing ones are left out, as before.
      db.exec('SAVEPOINT pulled_batch');
      try {
        for (const pulled of fresh) applyOne(db, batch.team, pulled, applierFor(pulled.op.op), false);
      } catch {
        db.exec('ROLLBACK TO pulled_batch');
        for (const pulled of fresh) applyOne(db, batch.team, pulled, applierFor(pulled.op.op), true);
      } finally {
        db.exec('RELEASE pulled_batch');
      }
      runSql(db, 'INSERT INTO pool_cursor(team, pulled_seq) VALUES (?, ?) ON CONFLICT(team) DO UPDATE SET pulled_seq = max(pulled_seq, excluded.pulled_seq)', [batch.team, batch.upTo]);
    });
  };
  return { name: 'pool', migrations: MIGRATIONS, appliers: { 'pool.pulled': applyPulled } };
}

/**
 * Applies one pulled operation with its owner's applier and records its id as applied. One this
 * build does not know (a newer member's) or that fails here is still recorded as seen: retrying
 * it at every pull would change nothing. `alone`: in a savepoint of its own, so a failure undoes
 * only its part; otherwise a failure reaches the caller.
 */
function applyOne(db: Database, team: string, pulled: PulledOperation, apply: Applier | undefined, alone: boolean): void {
  if (apply && alone) {
    db.exec('SAVEPOINT pulled');
    try {
      apply(db, pulled.op);
      db.exec('RELEASE pulled');
    } catch {
      db.exec('ROLLBACK TO pulled');
      db.exec('RELEASE pulled');
    }
  } else if (apply) {
    apply(db, pulled.op);
  }
  runSql(db, 'INSERT INTO pool_applied(op_id, team, seq, origin) VALUES (?, ?, ?, ?)', [pulled.id, team, pulled.seq, pulled.origin]);
}
