import { describe, expect, it } from 'vitest';
import type { PoolPulled, PulledOperation } from '../../src/core/pool/poolSchema';
import type { Services } from '../../src/core/services';
import type { Operation } from '../../src/core/store/journal';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { openTemp, tempHome } from './helpers/tempStore';

/**
 * How a pulled batch lands in a store, without a server: the batch is applied all at once, and
 * must end exactly as if each operation had been applied on its own (the journal replay's way).
 */

const TEAM = 'core';

function fact(i: number, subject: string, object: string, at: number): Operation {
  const id = `${at.toString(36).padStart(9, '0')}${i.toString(16).padStart(10, '0')}`;
  return { op: 'memory.fact.saved', at, id, subject, predicate: 'is', object, scope: `team:${TEAM}`, source: 'test', statement: null, cites: [] };
}

function pulled(ops: Operation[], from = 1): PulledOperation[] {
  return ops.map((op, i) => ({ id: `pool-op-${from + i}`, seq: from + i, origin: 'other-machine', op }));
}

async function commitBatch(s: Services, ops: PulledOperation[]): Promise<void> {
  const upTo = Math.max(...ops.map((o) => o.seq));
  const op: PoolPulled = { op: 'pool.pulled', at: Date.now(), team: TEAM, upTo, ops };
  await s.store.commit(() => ({ op, result: undefined }));
}

function ledger(s: Services): unknown[] {
  return queryRows(s.store.db, 'SELECT id, subject, object, recorded_at, superseded_at, superseded_by, valid_from, valid_to, fts_docid IS NOT NULL AS indexed FROM facts ORDER BY id');
}

function indexedBodies(s: Services): string[] {
  return queryRows(s.store.db, "SELECT body FROM memory_fts WHERE ref LIKE 'fact:%' ORDER BY body").map((r) => String(r.body));
}

describe('a pulled batch applied at once', () => {
  it('an operation that fails is left out whole and the rest of its batch lands; each is recorded once', async () => {
    const s = await openTemp(tempHome('pool-apply-fail'));
    try {
      const t = 1_800_000_000_000;
      const first = fact(1, 'alpha', 'one', t);
      // The same fact id again with another subject: its FTS row goes in, then the facts insert
      // fails on the id. Applied on its own, that leaves nothing of it.
      const clash = { ...fact(2, 'beta', 'two', t + 1), id: first.id as string };
      const third = fact(3, 'gamma', 'three', t + 2);
      await commitBatch(s, pulled([first, clash, third]));
      expect(queryRows(s.store.db, 'SELECT subject FROM facts ORDER BY subject').map((r) => r.subject)).toEqual(['alpha', 'gamma']);
      expect(indexedBodies(s)).toEqual(['alpha is one', 'gamma is three']);
      expect(Number(queryScalar(s.store.db, 'SELECT count(*) FROM pool_applied'))).toBe(3);
      expect(Number(queryScalar(s.store.db, "SELECT pulled_seq FROM pool_cursor WHERE team = 'core'"))).toBe(3);
      // The same batch again (a pull repeated after a crash) changes nothing.
      const before = ledger(s);
      await commitBatch(s, pulled([first, clash, third]));
      expect(ledger(s)).toEqual(before);
      expect(indexedBodies(s)).toEqual(['alpha is one', 'gamma is three']);
      expect(s.store.warnings).toEqual([]);
    } finally {
      s.store.close();
    }
  });

  it('values of one fact in any order end as if applied one by one: the latest current, the others in history', async () => {
    const t = 1_800_000_000_000;
    const values = [fact(1, 'build', 'make', t), fact(2, 'build', 'ninja', t + 10), fact(3, 'Build', 'bazel', t + 5), fact(4, 'build', 'cmake', t + 10), fact(5, 'other', 'x', t + 1)];
    // Arrival order: the latest first, the earliest last, and two values in the same millisecond.
    const arrival = [values[3], values[1], values[4], values[0], values[2]] as Operation[];
    const batched = await openTemp(tempHome('pool-apply-batch'));
    const single = await openTemp(tempHome('pool-apply-single'));
    try {
      await commitBatch(batched, pulled(arrival));
      for (const op of arrival) await single.store.commit(() => ({ op, result: undefined }));
      expect(ledger(batched)).toEqual(ledger(single));
      expect(indexedBodies(batched)).toEqual(indexedBodies(single));
      const current = queryRows(batched.store.db, "SELECT object FROM facts WHERE subject_key = 'build' AND superseded_at IS NULL").map((r) => r.object);
      // Same millisecond: the larger id is later.
      expect(current).toEqual([values[3]?.object]);
      expect(Number(queryScalar(batched.store.db, "SELECT count(*) FROM facts WHERE subject_key = 'build'"))).toBe(4);
    } finally {
      batched.store.close();
      single.store.close();
    }
  });
});
