import { describe, expect, it } from 'vitest';
import { SignTable } from '../../src/core/memory/semantic/signTable';
import { bestByTwoBits, byteSums, magnitudeBits } from '../../src/core/memory/semantic/twoBitPass';
import { generator } from './helpers/fixedSequence';

/** The median magnitude of `codes` by its definition: the middle one once sorted. */
function medianMagnitude(codes: Int8Array): number {
  return Array.from(codes, (c) => Math.abs(c)).sort((a, b) => a - b)[codes.length >> 1] as number;
}

/**
 * The score by definition: the query's dot product with the vector coarsened to two bits a
 * dimension, ±1 where the code's magnitude is at most the median and ±4 above it (a zero code
 * counts as negative, as its sign bit is clear).
 */
function reference(codes: Int8Array, query: Float32Array): number {
  const median = medianMagnitude(codes);
  let s = 0;
  for (let d = 0; d < codes.length; d++) {
    const c = codes[d] as number;
    s += (c > 0 ? 1 : -1) * (Math.abs(c) > median ? 4 : 1) * (query[d] as number);
  }
  return s;
}

describe('the two-bit pass (the second pass by sign)', () => {
  it('marks the dimensions whose magnitude is above the median', () => {
    const next = generator(3);
    for (const dims of [512, 100, 7]) {
      const codes = Int8Array.from({ length: dims }, () => Math.round(next() * 127));
      const bits = magnitudeBits(codes, Math.ceil(dims / 128) * 16);
      const median = medianMagnitude(codes);
      for (let d = 0; d < dims; d++) expect(((bits[d >> 3] as number) >> (d & 7)) & 1).toBe(Math.abs(codes[d] as number) > median ? 1 : 0);
    }
  });

  for (const dims of [512, 100]) {
    it(`keeps the best by the score's definition, from the tables of every slot and from a read of the candidates alike, at ${dims} dimensions`, () => {
      const next = generator(dims + 7);
      const table = new SignTable(dims);
      const stride = table.stride;
      const all: Int8Array[] = [];
      const magnitudes = new Uint8Array(3_000 * stride);
      for (let i = 0; i < 3_000; i++) {
        const codes = Int8Array.from({ length: dims }, () => Math.round(next() * 20));
        all.push(codes);
        table.reserve(i + 1);
        table.set(i, codes);
        magnitudes.set(magnitudeBits(codes, stride), i * stride);
      }
      const query = Float32Array.from({ length: dims }, () => next());
      // Every third slot is a candidate, as the first pass's would be: ascending, not all of them.
      const slots = Uint32Array.from({ length: 1_000 }, (_, i) => i * 3);
      const scored = [...slots].map((slot) => ({ slot, score: reference(all[slot] as Int8Array, query) })).sort((a, b) => b.score - a.score || a.slot - b.slot);
      const want = scored.slice(0, 250).map((c) => c.slot).sort((a, b) => a - b);
      // No tie at the cut, so float rounding between the two ways of summing cannot pick another.
      expect((scored[249] as { score: number }).score - (scored[250] as { score: number }).score).toBeGreaterThan(1e-9);
      const sums = byteSums(query, stride);
      const read = new Uint8Array(slots.length * 2 * stride);
      slots.forEach((slot, i) => {
        read.set(table.packed(slot), i * 2 * stride);
        read.set(magnitudes.subarray(slot * stride, (slot + 1) * stride), i * 2 * stride + stride);
      });
      expect(Array.from(bestByTwoBits(sums, stride, slots, 250, { signs: table.all, magnitudes, step: stride, byPosition: false }))).toEqual(want);
      expect(Array.from(bestByTwoBits(sums, stride, slots, 250, { signs: read, magnitudes: read.subarray(stride), step: 2 * stride, byPosition: true }))).toEqual(want);
    });
  }

  it('breaks ties by the lower slot, and keeps every candidate when there are no more than asked for', () => {
    const table = new SignTable(16);
    const stride = table.stride;
    const same = Int8Array.from({ length: 16 }, (_, d) => (d % 2 ? 1 : -1));
    const magnitudes = new Uint8Array(6 * stride);
    for (let i = 0; i < 6; i++) {
      const codes = i === 4 ? Int8Array.from({ length: 16 }, () => 1) : same;
      table.reserve(i + 1);
      table.set(i, codes);
      magnitudes.set(magnitudeBits(codes, stride), i * stride);
    }
    const query = Float32Array.from({ length: 16 }, () => 0.25);
    const slots = Uint32Array.of(0, 1, 2, 3, 4, 5);
    const sums = byteSums(query, stride);
    const bits = { signs: table.all, magnitudes, step: stride, byPosition: false };
    // Slot 4 has every sign positive, so the best score; the others tie and the lowest go.
    expect(Array.from(bestByTwoBits(sums, stride, slots, 3, bits))).toEqual([0, 1, 4]);
    expect(bestByTwoBits(sums, stride, slots, 6, bits)).toBe(slots);
  });
});
