export const RECALL_KS = [5, 10] as const;

export const RECALL_DEFINITION =
  'recall@k of a question = (evidence turns that appear among the first k ranked items of the reply) / (evidence turns). ' +
  'A ranked item is one search_text hit, one get_context item in the order it appears in the reply (facts, then notes), or one BM25 document; ' +
  'a turn stored as several entries counts once, as soon as any of them appears. Figures are the mean over questions that have evidence turns.';

export function recallAt(ranked: readonly (string | undefined)[], evidence: readonly string[], k: number): number {
  if (!evidence.length) throw new Error('recall of a question without evidence is undefined');
  const top = new Set(ranked.slice(0, k));
  return evidence.filter((e) => top.has(e)).length / evidence.length;
}

export interface RecallFigures {
  questions: number;
  'recall@5': number;
  'recall@10': number;
}

/** Per-question recall at each k → the mean over questions, rounded for reading (4 places). */
export class RecallTally {
  private n = 0;
  private readonly sums = new Map<number, number>(RECALL_KS.map((k) => [k, 0]));

  add(ranked: readonly (string | undefined)[], evidence: readonly string[]): void {
    this.n++;
    for (const k of RECALL_KS) this.sums.set(k, (this.sums.get(k) ?? 0) + recallAt(ranked, evidence, k));
  }

  figures(): RecallFigures {
    const mean = (k: number) => (this.n ? round4((this.sums.get(k) ?? 0) / this.n) : 0);
    return { questions: this.n, 'recall@5': mean(5), 'recall@10': mean(10) };
  }
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
