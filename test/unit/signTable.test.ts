import { describe, expect, it } from 'vitest';
import { SignTable } from '../../src/core/memory/semantic/signTable';
import { generator } from './helpers/fixedSequence';


/** The distance by definition: the dimensions where the code is positive and the query's is not, or the other way round. */
function reference(codes: Int8Array, query: Float32Array): number {
  let h = 0;
  for (let d = 0; d < codes.length; d++) if ((codes[d] as number) > 0 !== (query[d] as number) > 0) h++;
  return h;
}

describe('sign table', () => {
  it('runs the distance pass as wasm SIMD here', () => {
    expect(new SignTable(512).simd).toBe(true);
  });

  for (const dims of [512, 40, 100, 384, 1536]) {
    it(`gives every vector's Hamming distance by definition at ${dims} dimensions, across growth`, () => {
      const next = generator(dims);
      const table = new SignTable(dims);
      const all: Int8Array[] = [];
      // Past the first capacity (1,024), so vectors set before a growth are read after it.
      for (let i = 0; i < 2_500; i++) {
        // Zeros too: a zero code counts as not positive, as in the query.
        const codes = Int8Array.from({ length: dims }, () => Math.round(next() * 3));
        all.push(codes);
        table.reserve(i + 1);
        table.set(i, codes);
      }
      for (let round = 0; round < 3; round++) {
        const query = Float32Array.from({ length: dims }, () => (round === 2 ? 0 : next()));
        const got = Array.from(table.distances(query, all.length));
        expect(got).toEqual(all.map((c) => reference(c, query)));
      }
      expect(Array.from(table.distances(new Float32Array(dims), 0))).toEqual([]);
    });
  }
});
