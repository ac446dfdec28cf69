/** A fixed sequence of numbers in [-1, 1), so a failure names the same vectors every run. */
export function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
}
