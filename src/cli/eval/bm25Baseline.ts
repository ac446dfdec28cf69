/**
 * The baseline the product is measured against: textbook Okapi BM25 over the same turn texts,
 * held in memory, with nothing else (no stop words, no recency, no budget). It is a yardstick
 * for the eval only and lives here, not in core/search, so nothing in the product can rank with it.
 */
const K1 = 1.2;
const B = 0.75;

/** The index's idea of a word: unicode61 with diacritics removed, lower-cased, split on anything not a letter, digit or mark. */
export function baselineTokens(text: string): string[] {
  return [...text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)].map((m) => m[0]);
}

export class Bm25Baseline {
  private readonly docs: { key: string; tf: Map<string, number>; length: number }[] = [];
  private readonly df = new Map<string, number>();
  private totalLength = 0;

  add(key: string, text: string): void {
    const tf = new Map<string, number>();
    const tokens = baselineTokens(text);
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.docs.push({ key, tf, length: tokens.length });
    this.totalLength += tokens.length;
  }

  /** Keys of the best `limit` documents holding any query word, best first; ties keep insertion order. */
  rank(query: string, limit: number): string[] {
    const n = this.docs.length;
    const avg = this.totalLength / (n || 1);
    const words = [...new Set(baselineTokens(query))];
    // The +1 inside the log (Lucene's form) keeps a word most turns hold from scoring below zero.
    const idf = new Map(words.map((w) => [w, Math.log(1 + (n - (this.df.get(w) ?? 0) + 0.5) / ((this.df.get(w) ?? 0) + 0.5))]));
    const scored: { key: string; score: number; i: number }[] = [];
    this.docs.forEach((d, i) => {
      let score = 0;
      const norm = K1 * (1 - B + (B * d.length) / (avg || 1));
      for (const w of words) {
        const tf = d.tf.get(w) ?? 0;
        if (tf > 0) score += (idf.get(w) ?? 0) * ((tf * (K1 + 1)) / (tf + norm));
      }
      if (score > 0) scored.push({ key: d.key, score, i });
    });
    return scored.sort((a, b) => b.score - a.score || a.i - b.i).slice(0, limit).map((s) => s.key);
  }
}
