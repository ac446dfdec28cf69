import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/core/store/sqlite';
import { openTemp } from './helpers/tempStore';

/** Three values of one fact, as three machines recorded them (two in the same millisecond). */
const VALUES = [
  { at: 1_000, id: '0000000rsaaaaaaaaaa', object: 'Monday' },
  { at: 2_000, id: '0000001jkbbbbbbbbbb', object: 'Tuesday' },
  { at: 2_000, id: '0000001jkcccccccccc', object: 'Wednesday' },
];

function permutations<T>(xs: readonly T[]): T[][] {
  return xs.length <= 1 ? [[...xs]] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe("a fact's values ordered by (time, id), whatever order they arrive in", () => {
  it('every arrival order of three values ends with the same ledger: the same current value, history chain and search index', async () => {
    const ledgers: unknown[] = [];
    for (const order of permutations(VALUES)) {
      const s = await openTemp();
      try {
        for (const v of order) {
          await s.store.commit(() => ({ op: { op: 'memory.fact.saved', at: v.at, id: v.id, subject: 'stand-up', predicate: 'happens on', object: v.object, scope: 'team:core', source: 'test', statement: null, cites: [] }, result: undefined }));
        }
        const db = s.store.db;
        ledgers.push({
          facts: queryRows(db, 'SELECT id, object, superseded_at, superseded_by, valid_from, valid_to, fts_docid IS NOT NULL AS indexed FROM facts ORDER BY id'),
          current: s.memory.retrieve({ subject: 'stand-up', scope: 'team:core' }),
          found: (s.memory.searchText({ query: 'stand-up' }) as { results?: { id: string }[] }).results?.map((r) => r.id),
        });
      } finally {
        s.store.close();
      }
    }
    expect((ledgers[0] as { facts: { object: string; superseded_at: unknown }[] }).facts.find((f) => f.superseded_at === null)?.object).toBe('Wednesday');
    for (const l of ledgers) expect(l).toEqual(ledgers[0]);
  }, 60_000);

  it('a value written in the same millisecond as the one it replaces becomes current (the writer picks an id after it)', async () => {
    const s = await openTemp(undefined, () => 5_000);
    try {
      for (const object of ['one', 'two', 'three', 'four']) await s.memory.remember({ subject: 'build', predicate: 'uses', object, statement: `build uses ${object}` }, 'test');
      const r = s.memory.retrieve({ subject: 'build', include_history: true }) as { values: { object: string; status: string }[] };
      expect(r.values.filter((v) => v.status === 'current').map((v) => v.object)).toEqual(['four']);
      expect(r.values).toHaveLength(4);
    } finally {
      s.store.close();
    }
  });
});
