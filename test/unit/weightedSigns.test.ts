import { describe, expect, it } from 'vitest';
import { SignTable } from '../../src/core/memory/semantic/signTable';
import { bestByWeightedSigns, byteSums } from '../../src/core/memory/semantic/weightedSigns';
import { generator } from './helpers/fixedSequence';


/** The score by definition: the query's values summed over the dimensions where the code is positive. */
function reference(codes: Int8Array, query: Float32Array): number {
  let s = 0;
  for (let d = 0; d < codes.length; d++) if ((codes[d] as number) > 0) s += query[d] as number;
  return s;
}

describe('weighted signs (the second pass by sign)', () => {
  for (const dims of [512, 100]) {
    it(`keeps the best by the score's definition, from the whole table and from packed signs alike, at ${dims} dimensions`, () => {
      const next = generator(dims + 7);
      const table = new SignTable(dims);
      const all: Int8Array[] = [];
      for (let i = 0; i < 3_000; i++) {
        const codes = Int8Array.from({ length: dims }, () => Math.round(next() * 3));
        all.push(codes);
        table.reserve(i + 1);
        table.set(i, codes);
      }
      const query = Float32Array.from({ length: dims }, () => next());
      // Every third slot is a candidate, as the first pass's would be: ascending, not all of them.
      const slots = Uint32Array.from({ length: 1_000 }, (_, i) => i * 3);
      const want = [...slots]
        .map((slot) => ({ slot, score: reference(all[slot] as Int8Array, query) }))
        .sort((a, b) => b.score - a.score || a.slot - b.slot)
        .slice(0, 250)
        .map((c) => c.slot)
        .sort((a, b) => a - b);
      const sums = byteSums(query, table.stride);
      const packed = new Uint8Array(slots.length * table.stride);
      slots.forEach((slot, i) => packed.set(table.packed(slot), i * table.stride));
      expect(Array.from(bestByWeightedSigns(sums, table.stride, slots, 250, table.all, false))).toEqual(want);
      expect(Array.from(bestByWeightedSigns(sums, table.stride, slots, 250, packed, true))).toEqual(want);
    });
  }

  it('breaks ties by the lower slot, and keeps every candidate when there are no more than asked for', () => {
    const table = new SignTable(16);
    const same = Int8Array.from({ length: 16 }, (_, d) => (d % 2 ? 1 : -1));
    for (let i = 0; i < 6; i++) {
      table.reserve(i + 1);
      table.set(i, i === 4 ? Int8Array.from({ length: 16 }, () => 1) : same);
    }
    const query = Float32Array.from({ length: 16 }, () => 0.25);
    const slots = Uint32Array.of(0, 1, 2, 3, 4, 5);
    const sums = byteSums(query, table.stride);
    // Slot 4 has every sign positive, so the best score; the others tie and the lowest go.
    expect(Array.from(bestByWeightedSigns(sums, table.stride, slots, 3, table.all, false))).toEqual([0, 1, 4]);
    expect(bestByWeightedSigns(sums, table.stride, slots, 6, table.all, false)).toBe(slots);
  });
});
