/** Sort orders shared by every search tool (chat_history, lcm_grep, chapters_search, search_text, get_context…). */
export type SearchSort = 'recency' | 'relevance' | 'hybrid';

export interface Ranked {
  docid: number;
  /** BM25 relevance, higher is better (FTS5 reports the negative of this). */
  bm25: number;
  createdAt: number;
  /** The value the chosen sort ordered by. */
  score: number;
}

const K1 = 1.2;
const B = 0.75;
/** Hybrid decay from the lossless-context design: a day-old hit keeps 97.7% of its relevance. */
const HYBRID_DECAY_PER_HOUR = 0.001;

export interface CorpusStats {
  totalDocs: number;
  avgDocLength: number;
  /** Documents containing each phrase, in query order. */
  docsWithPhrase: number[];
}

/** Okapi BM25 as FTS5 computes it, with the same floor for very common terms. */
export function idf(stats: CorpusStats): number[] {
  return stats.docsWithPhrase.map((n) => {
    const v = Math.log((stats.totalDocs - n + 0.5) / (n + 0.5));
    return v > 0 ? v : 1e-6;
  });
}

export function bm25(termFreqs: ArrayLike<number>, docLength: number, idfs: number[], avgDocLength: number): number {
  let score = 0;
  const norm = K1 * (1 - B + (B * docLength) / (avgDocLength || 1));
  for (let i = 0; i < idfs.length; i++) {
    const tf = termFreqs[i] ?? 0;
    if (tf > 0) score += (idfs[i] as number) * ((tf * (K1 + 1)) / (tf + norm));
  }
  return score;
}

export function sortValue(sort: SearchSort, bm: number, createdAt: number, now: number): number {
  switch (sort) {
    case 'relevance':
      return bm;
    case 'recency':
      return createdAt;
    case 'hybrid': {
      const ageHours = Math.max(0, (now - createdAt) / 3_600_000);
      return bm / (1 + ageHours * HYBRID_DECAY_PER_HOUR);
    }
  }
}

/** Keeps the best `k` by score without sorting every match (common words match tens of thousands of rows). */
export function topK(items: Ranked[], k: number): Ranked[] {
  if (items.length <= k) return items.sort(compare);
  const heap: Ranked[] = [];
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      siftUp(heap, heap.length - 1);
    } else if (compare(item, heap[0] as Ranked) < 0) {
      heap[0] = item;
      siftDown(heap, 0);
    }
  }
  return heap.sort(compare);
}

/** Best first; ties broken by newer, then by docid so results are stable. */
function compare(a: Ranked, b: Ranked): number {
  return b.score - a.score || b.createdAt - a.createdAt || b.docid - a.docid;
}

// A min-heap on "best first" order: the root is the worst of the kept items.
function siftUp(h: Ranked[], i: number): void {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (compare(h[i] as Ranked, h[p] as Ranked) <= 0) return;
    [h[i], h[p]] = [h[p] as Ranked, h[i] as Ranked];
    i = p;
  }
}

function siftDown(h: Ranked[], i: number): void {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let worst = i;
    if (l < h.length && compare(h[l] as Ranked, h[worst] as Ranked) > 0) worst = l;
    if (r < h.length && compare(h[r] as Ranked, h[worst] as Ranked) > 0) worst = r;
    if (worst === i) return;
    [h[i], h[worst]] = [h[worst] as Ranked, h[i] as Ranked];
    i = worst;
  }
}
