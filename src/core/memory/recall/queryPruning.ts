import { queryScalar, type Database } from '../../store/sqlite';
import { withCachedStatement } from '../../store/statementCache';

/**
 * The words of a request that are worth a search. An any-word query over a sentence matches
 * most of the store through its commonest words, and scoring every match is what a
 * get_context spends its time on (a word in 40% of 70,000 memories is 28,000 rows to score).
 * Those words carry almost no BM25 weight — their idf is near the floor — so leaving them out
 * barely moves the top of the ranking. Words are taken rarest first while the documents they
 * can match stay under a budget, and at most eight of them; the rarest word is always kept.
 */
export const MATCH_BUDGET = 3_000;
/** Each phrase adds a doclist to merge and matchinfo columns to every row: the rarest this many carry the query. */
export const MAX_WORDS_SEARCHED = 8;

/**
 * Document counts per word for one store version: requests repeat their common words. The
 * counts are exact for the version they were read at and dropped as soon as the store moves, so
 * which words are searched — and so the reply — depends only on the store's state, never on
 * what was asked before. One cache per store.
 *
 * A count is taken only as far as pruning needs it: up to MATCH_BUDGET, past which a word is
 * OVER_BUDGET and dropped whatever its exact count (`prunedWords`). Counting past that would read
 * a common word's whole doclist (28,000 docids for a word in 40% of 70,000 memories) only to
 * leave the word out; the exact count is taken only when every word is that common and the
 * rarest must be found.
 */
export class DocumentCounts {
  private readonly counts = new Map<string, number>();
  private version: number | undefined;

  /** Whether every word's count for this version is held, so `of` would answer without a statement. */
  holds(version: number, table: string, words: readonly string[]): boolean {
    return version === this.version && words.every((w) => this.counts.has(`${table}\u0000${w}`));
  }

  /** Each word's document count, or OVER_BUDGET for more than MATCH_BUDGET; with `exact`, every count exact. */
  of(db: Database, version: number, table: string, words: readonly string[], exact = false): number[] | undefined {
    if (version !== this.version || this.counts.size > 20_000) {
      this.counts.clear();
      this.version = version;
    }
    const key = (w: string) => `${table}\u0000${w}`;
    const missing = words.filter((w) => !this.counts.has(key(w)) || (exact && this.counts.get(key(w)) === OVER_BUDGET));
    if (missing.length) {
      const fresh = exact ? documentCounts(db, table, missing) : missing.map((w) => documentsUpTo(db, table, w, MATCH_BUDGET));
      if (!fresh) return undefined;
      missing.forEach((w, i) => this.counts.set(key(w), fresh[i] ?? 0));
    }
    return words.map((w) => this.counts.get(key(w)) ?? 0);
  }
}

/** A count past MATCH_BUDGET, not taken further. */
export const OVER_BUDGET = MATCH_BUDGET + 1;

export interface Pruned {
  kept: string[];
  dropped: string[];
  /** At most this many rows match the kept words (the sum of their document counts); undefined when not known. */
  matches: number | undefined;
  /** Each kept word's document count, in `kept`'s order (what matchinfo 'x' reports for it); undefined when not known. */
  keptCounts: number[] | undefined;
}

export function prunedWords(db: Database, version: number, table: string, words: readonly string[], cache: DocumentCounts): Pruned {
  let df = words.length ? cache.of(db, version, table, words) : undefined;
  // Every word that matches is past the budget: only the rarest is searched, and finding it (and
  // its count, which BM25 and the count of matches left unranked use) takes exact counts.
  if (df?.some((n) => n > 0) && df.every((n) => n === 0 || n === OVER_BUDGET)) df = cache.of(db, version, table, words, true);
  if (!df) return { kept: [...words], dropped: [], matches: undefined, keptCounts: undefined };
  const order = words.map((w, i) => ({ w, n: df[i] ?? 0 })).sort((a, b) => a.n - b.n);
  const kept: string[] = [];
  const keptCounts: number[] = [];
  const dropped: string[] = [];
  let budget = 0;
  let matching = 0;
  for (const { w, n } of order) {
    // A word that matches nothing costs nothing to search for (and may be brand new); the
    // rarest word that matches something is always searched.
    if (n > 0 && matching > 0 && (budget + n > MATCH_BUDGET || matching >= MAX_WORDS_SEARCHED)) {
      dropped.push(w);
      continue;
    }
    kept.push(w);
    keptCounts.push(n);
    budget += n;
    if (n > 0) matching++;
  }
  return { kept, dropped, matches: budget, keptCounts };
}

/**
 * The docid from which on the newest `budget` rows matching any of the words lie, or
 * undefined when fewer match. FTS4 walks a doclist backwards for ORDER BY docid DESC, so this
 * reads `budget` docids and no row.
 */
export function newestWindow(db: Database, table: string, words: readonly string[], budget: number): number | undefined {
  const match = words.map((w) => `"${w.replace(/"/g, '')}"`).join(' OR ');
  const docid = queryScalar(db, `SELECT docid FROM ${table} WHERE ${table} MATCH ? ORDER BY docid DESC LIMIT 1 OFFSET ?`, [match, budget - 1]);
  return docid === undefined || docid === null ? undefined : Number(docid);
}

/**
 * Documents holding `word` (a phrase), counted up to `cap`; OVER_BUDGET past it. FTS4 reads a
 * single phrase's doclist incrementally, so this reads about `cap` docids however common the
 * word is, where matchinfo 'x' reads the whole doclist (docs/performance.md, CAPPEDCOUNTS).
 */
function documentsUpTo(db: Database, table: string, word: string, cap: number): number {
  const n = withCachedStatement(db, `SELECT count(*) FROM (SELECT docid FROM ${table} WHERE ${table} MATCH ? LIMIT ?)`, [`"${word.replace(/"/g, '')}"`, cap + 1], (stmt) => (stmt.step() ? Number(stmt.get()[0]) : 0));
  return n > cap ? OVER_BUDGET : n;
}

/**
 * Documents holding each word, exactly, in one statement: matchinfo 'x' on any one matching row reports,
 * for every phrase, the number of documents with a hit across the whole table (read from the
 * doclists, no row visited). No matching row means every count is zero — an answer, not an
 * unknown: treating it as unknown once let a word new to the store switch pruning off.
 */
function documentCounts(db: Database, table: string, words: readonly string[]): number[] | undefined {
  const match = words.map((w) => `"${w.replace(/"/g, '')}"`).join(' OR ');
  const hex = withCachedStatement(db, `SELECT hex(matchinfo(${table}, 'pcx')) FROM ${table} WHERE ${table} MATCH ? LIMIT 1`, [match], (stmt) => (stmt.step() ? stmt.get()[0] : undefined));
  if (hex === undefined) return words.map(() => 0);
  if (typeof hex !== 'string') return undefined;
  const int = (i: number) => {
    const at = i * 8;
    return (parseInt(hex.slice(at, at + 2), 16) | (parseInt(hex.slice(at + 2, at + 4), 16) << 8) | (parseInt(hex.slice(at + 4, at + 6), 16) << 16) | (parseInt(hex.slice(at + 6, at + 8), 16) << 24)) >>> 0;
  };
  const phrases = int(0);
  const cols = int(1);
  if (phrases !== words.length) return undefined;
  // 'x': three values per phrase and column; the third is "documents with a hit", column 0 is the body.
  return words.map((_, p) => int(2 + 3 * (p * cols) + 2));
}
