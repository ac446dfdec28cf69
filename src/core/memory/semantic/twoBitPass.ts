/**
 * The second pass of a ranking by sign: each vector seen at two bits a dimension, its sign and
 * whether the code's magnitude is above the vector's median, scored against the query's own
 * values. The Hamming distance of the first pass counts every disagreeing dimension alike; this
 * scores a vector by its dot product with the query after the vector is coarsened to ±1 (a small
 * value) or ±(1 + MAGNITUDE_WEIGHT) (a large one). Dimensions a vector leans on count for more,
 * which is what the exact cosine does, so the estimate is close: on the bench store the 800 it
 * keeps hold as much of the exact top 200 as 2,400 kept by signs alone did (docs/performance.md).
 * It reads 64 more bytes a vector than the signs, which the magnitude bits take in memory.
 *
 * Bits are packed as SignTable packs signs: byte j holds dimensions 8j to 8j + 7, lowest bit
 * first. Per byte position a table of 256 sums (the query's values over the bits set) turns a
 * vector's score into three lookups a byte: the signs, the magnitude bits, and both.
 */

/** How much more a dimension of large magnitude counts than a small one (≈ the ratio of the two halves' mean magnitude, less one). */
const MAGNITUDE_WEIGHT = 3;

/** Bit d set where |codes[d]| is above the median magnitude of `codes` (int8 codes: magnitudes 0 to 128). */
export function magnitudeBits(codes: Int8Array, stride: number): Uint8Array {
  const counts = new Uint32Array(129);
  for (let d = 0; d < codes.length; d++) {
    const c = Math.abs(codes[d] as number);
    counts[c] = (counts[c] as number) + 1;
  }
  let median = 0;
  for (let seen = 0; median < 128 && seen + (counts[median] as number) <= codes.length >> 1; median++) seen += counts[median] as number;
  const out = new Uint8Array(stride);
  for (let d = 0; d < codes.length; d++) if (Math.abs(codes[d] as number) > median) out[d >> 3] = (out[d >> 3] as number) | (1 << (d & 7));
  return out;
}

/** Per byte position j, for each of the 256 byte values, the sum of the query's values over the dimensions of j whose bits are set. */
export function byteSums(query: Float32Array, stride: number): Float64Array {
  const sums = new Float64Array(stride * 256);
  for (let j = 0; j < stride; j++) {
    const base = j * 256;
    for (let b = 1; b < 256; b++) {
      const low = 31 - Math.clz32(b & -b);
      const d = j * 8 + low;
      sums[base + b] = (sums[base + (b & (b - 1))] as number) + (d < query.length ? (query[d] as number) : 0);
    }
  }
  return sums;
}

/**
 * Where the pass finds the candidates' bits: candidate i (of slot `slots[i]`) has its signs at
 * `at` in `signs` and its magnitude bits at `at` in `magnitudes`, `at` being `i × step` when
 * `byPosition` (a read of the candidates' records, back to back) and `slot × step` otherwise
 * (the tables of every slot).
 */
export interface TwoBits {
  signs: Uint8Array;
  magnitudes: Uint8Array;
  step: number;
  byPosition: boolean;
}

/**
 * Of `slots` (ascending), the `keep` with the highest two-bit score, ascending; ties go to the
 * lower slots. The score, up to a constant the same for every vector: 2·S(signs) +
 * W·(2·S(signs & large) − S(large)), S summing the query's values over the dimensions given.
 */
export function bestByTwoBits(sums: Float64Array, stride: number, slots: Uint32Array, keep: number, bits: TwoBits): Uint32Array {
  if (slots.length <= keep) return slots;
  const { signs, magnitudes, step, byPosition } = bits;
  const scores = new Float64Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const at = (byPosition ? i : (slots[i] as number)) * step;
    let positive = 0;
    let large = 0;
    let both = 0;
    for (let j = 0, base = 0; j < stride; j++, base += 256) {
      const s = signs[at + j] as number;
      const m = magnitudes[at + j] as number;
      positive += sums[base + s] as number;
      large += sums[base + m] as number;
      both += sums[base + (s & m)] as number;
    }
    scores[i] = 2 * positive + MAGNITUDE_WEIGHT * (2 * both - large);
  }
  // The keep-th highest score: every slot above it is kept, then those equal to it in slot order.
  const cut = scores.slice().sort()[slots.length - keep] as number;
  const out = new Uint32Array(keep);
  let n = 0;
  for (let i = 0; i < slots.length; i++) if ((scores[i] as number) > cut) out[n++] = slots[i] as number;
  for (let i = 0; i < slots.length && n < keep; i++) if (scores[i] === cut) out[n++] = slots[i] as number;
  return out.sort();
}
