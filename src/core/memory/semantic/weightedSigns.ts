/**
 * The second pass of a ranking by sign: a vector's signs scored against the query's own values
 * rather than its signs. The Hamming distance counts every disagreeing dimension alike; this
 * sums the query's value over the dimensions where the vector's sign is positive, which orders
 * vectors by their dot product with the query's ±1 image of each vector, an estimate of the
 * cosine that is much closer than the distance is (the bench prints how much of the exact top
 * it keeps). It reads the same 64 bytes a vector as the first pass, so it costs no memory.
 *
 * Signs are packed as SignTable packs them: byte j holds dimensions 8j to 8j + 7, lowest bit
 * first. Per byte position a table of 256 sums turns a vector's score into one lookup a byte.
 */
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
 * Of `slots` (ascending), the `keep` with the highest score, ascending; ties go to the lower
 * slots. Slot i's signs are at `i × stride` in `signs` when `packed`, else at `slot × stride`
 * (the whole table).
 */
export function bestByWeightedSigns(sums: Float64Array, stride: number, slots: Uint32Array, keep: number, signs: Uint8Array, packed: boolean): Uint32Array {
  if (slots.length <= keep) return slots;
  const scores = new Float64Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    let at = (packed ? i : (slots[i] as number)) * stride;
    let s = 0;
    for (let base = 0; base < sums.length; base += 256) s += sums[base + (signs[at++] as number)] as number;
    scores[i] = s;
  }
  // The keep-th highest score: every slot above it is kept, then those equal to it in slot order.
  const cut = scores.slice().sort()[slots.length - keep] as number;
  const out = new Uint32Array(keep);
  let n = 0;
  for (let i = 0; i < slots.length; i++) if ((scores[i] as number) > cut) out[n++] = slots[i] as number;
  for (let i = 0; i < slots.length && n < keep; i++) if (scores[i] === cut) out[n++] = slots[i] as number;
  return out.sort();
}
