import { describe, expect, it } from 'vitest';
import { DocidSet } from '../../../src/core/lcm/excludedEvents';

describe('DocidSet (the excluded events the scorer drops)', () => {
  it('answers has() exactly as a Set of the same ids, inside and outside its range, with gaps and for an empty set', () => {
    // Ids together at the top (a log written after what it searches), then interleaved with others, then scattered.
    const cases: number[][] = [[], [7], Array.from({ length: 50 }, (_, i) => 1000 + i), Array.from({ length: 60 }, (_, i) => 200 + i * 3), [5, 900, 17, 4096, 33, 2 ** 31 + 5]];
    let asked = 0;
    for (const ids of cases) {
      const fast = new DocidSet(ids);
      const plain = new Set(ids);
      expect(fast.size).toBe(plain.size);
      expect([...fast]).toEqual([...plain]);
      for (let id = -3; id <= 5000; id++) {
        asked++;
        if (fast.has(id) !== plain.has(id)) expect.fail(`has(${id}) for ${ids.length} ids`);
      }
      for (const id of [2 ** 31 + 4, 2 ** 31 + 5, 2 ** 31 + 6, Number.MAX_SAFE_INTEGER]) expect(fast.has(id), `has(${id})`).toBe(plain.has(id));
    }
    expect(asked).toBeGreaterThan(20_000);
  });
});
