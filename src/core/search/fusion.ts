/**
 * Keyword and semantic candidates on one scale, and the credit a passage earns from what was
 * written next to it: the ranking get_context, search_memory and chat_history's default search
 * share. Scores are BM25 units, so a request's candidates compare whichever way they were found.
 */

/** A semantic similarity counts this share of the request's best BM25 (measured on LoCoMo: 0.3–0.6 gain, 1 loses). */
const SEMANTIC_WEIGHT = 0.5;
/** The share of a passage's score its neighbours in the same file or session gain (measured on LoCoMo: 0.4–0.6 is a plateau). */
const NEIGHBOUR_WEIGHT = 0.5;

/** What a semantic similarity adds to a candidate's score, against the request's best BM25 (1 when no word matched). */
export function semanticShare(bestKeyword: number, similarity: number): number {
  return SEMANTIC_WEIGHT * (bestKeyword || 1) * similarity;
}

/**
 * A candidate's BM25 plus its semantic share: a close meaning counts for about half of the best
 * keyword match, and a candidate found both ways leads. Semantic alone (no word matched) ranks
 * by similarity.
 */
export function fuseScores(keyword: readonly { docid: number; bm25: number }[], semantic: readonly { docid: number | null; similarity: number }[]): Map<number, number> {
  const score = new Map<number, number>();
  let best = 0;
  for (const h of keyword) {
    score.set(h.docid, h.bm25);
    best = Math.max(best, h.bm25);
  }
  for (const s of semantic) if (s.docid !== null && s.similarity > 0) score.set(s.docid, (score.get(s.docid) ?? 0) + semanticShare(best, s.similarity));
  return score;
}

/**
 * Each candidate gains NEIGHBOUR_WEIGHT of the score of the passages just before and after it
 * (`around`: docid → its neighbours' docids), and a neighbour that was no candidate enters with
 * that share. What answers a question is often split over neighbouring passages: a person asks
 * in one and the answer is the next, or a name is in one and what happened in the next.
 */
export function creditNeighbours(base: ReadonlyMap<number, number>, around: ReadonlyMap<number, readonly number[]>): Map<number, number> {
  const score = new Map(base);
  for (const [d, s] of base) for (const n of around.get(d) ?? []) score.set(n, (score.get(n) ?? 0) + NEIGHBOUR_WEIGHT * s);
  return score;
}
