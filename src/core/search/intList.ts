/** Parses "12,-3,40" without allocating a string per number. */
export function parseIntList(s: string, expected: number): number[] {
  const out = new Array<number>(expected);
  let n = 0;
  let v = 0;
  let neg = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 44) {
      out[n++] = neg ? -v : v;
      v = 0;
      neg = false;
    } else if (c === 45) neg = true;
    else v = v * 10 + (c - 48);
  }
  out[n++] = neg ? -v : v;
  out.length = n;
  return out;
}

/** The index of the last of `starts` (ascending, the first at or before `pos`) that is at or before `pos`: the span holding `pos`. */
export function lastAtOrBefore(starts: ArrayLike<number>, pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
