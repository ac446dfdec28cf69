/**
 * Byte-pair encoding of one pre-tokenized piece, giving the tokens js-tiktoken's own merge gives
 * (repeatedly join the adjacent pair of lowest rank, the leftmost of equal ranks) in
 * O(n log n) instead of its O(n²) rescan of every pair after each join. Its rescan makes one
 * long run of letters or punctuation (a minified line, a row of dashes, an unbroken hash chain)
 * cost seconds per few kilobytes, and every budgeted answer counts tokens, so a single hostile
 * note or tool output could stall the process that owns the store.
 *
 * Parts are named by the index of their first byte; `ends[s]` is where the part starting at s
 * ends (and so where the next part starts), `prevOf[s]` where the part before it starts.
 * A queued pair (rank, left, rightEnd) is still current while its left part and right part
 * are the ones it was made from; parts only grow, so that check is exact.
 */
export function mergePairs(piece: Uint8Array, ranks: ReadonlyMap<string, number>): number[] {
  const n = piece.length;
  const ends = new Int32Array(n + 1);
  const alive = new Uint8Array(n + 1);
  const prevOf = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    ends[i] = i + 1;
    alive[i] = 1;
    prevOf[i] = i - 1;
  }
  const queue = new PairQueue();
  const rankOf = (from: number, to: number): number | undefined => ranks.get(piece.subarray(from, to).join(','));
  const offer = (left: number): void => {
    const right = ends[left]!;
    if (right >= n) return;
    const rank = rankOf(left, ends[right]!);
    if (rank !== undefined) queue.push(rank, left, ends[right]!);
  };
  for (let i = 0; i + 1 < n; i++) offer(i);

  for (let pair = queue.pop(); pair; pair = queue.pop()) {
    const [, left, rightEnd] = pair;
    if (!alive[left]) continue;
    const right = ends[left]!;
    if (right >= n || ends[right] !== rightEnd) continue;
    alive[right] = 0;
    ends[left] = rightEnd;
    if (rightEnd < n) prevOf[rightEnd] = left;
    const before = prevOf[left]!;
    if (before >= 0) offer(before);
    offer(left);
  }

  const tokens: number[] = [];
  for (let s = 0; s < n; s = ends[s]!) {
    const rank = rankOf(s, ends[s]!);
    if (rank !== undefined) tokens.push(rank);
  }
  return tokens;
}

/** A binary min-heap of (rank, left) pairs, ties broken by the leftmost, as the rescan breaks them. */
class PairQueue {
  private readonly items: [number, number, number][] = [];

  push(rank: number, left: number, rightEnd: number): void {
    const items = this.items;
    items.push([rank, left, rightEnd]);
    let i = items.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!before(items[i]!, items[up]!)) break;
      [items[i], items[up]] = [items[up]!, items[i]!];
      i = up;
    }
  }

  pop(): [number, number, number] | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (!top || !last || items.length === 0) return top;
    items[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < items.length && before(items[l]!, items[least]!)) least = l;
      if (r < items.length && before(items[r]!, items[least]!)) least = r;
      if (least === i) break;
      [items[i], items[least]] = [items[least]!, items[i]!];
      i = least;
    }
    return top;
  }
}

function before(a: readonly number[], b: readonly number[]): boolean {
  return a[0]! < b[0]! || (a[0] === b[0] && a[1]! < b[1]!);
}
