import { DocumentCounts, prunedWords } from '../memory/recall/queryPruning';
import { STOP_WORDS } from '../memory/recall/queryWords';
import type { Database } from '../store/sqlite';
import { analyze } from '../text/analyzer';
import { excerptsOf } from './excerpts';
import { searchFts, type HitRow, type SearchOutcome, type SearchRequest } from './ftsSearch';
import { parseMatchQuery } from './matchQuery';
import type { Ranked } from './rank';

/**
 * Natural-language questions get answers: when the every-word match returns fewer hits than
 * asked for, the rest are filled with the best matches of any of the query's words (BM25 over
 * what each holds, so holding more and rarer words ranks higher), each hit saying which it is.
 * Every-word hits come first. Function words ("what", "did", "the") take no part in the any-word
 * search unless the query holds nothing else, and of the rest the commonest are left out while
 * the rows they could match pass a budget (queryPruning.ts, as get_context does): a word most
 * rows hold adds little to the ranking and would make every such search score most of the store.
 */

/** Whether a hit holds every word of the query, or only some. */
export type Matched = 'all' | 'partial';

export type MatchedHit = Ranked & { matched: Matched };

export type FilledOutcome =
  | {
      ok: true;
      hits: MatchedHit[];
      /** Rows holding every word. */
      total: number;
      /** Rows holding some word but not all, of those the any-word search looked at (after pruning); 0 when it did not run. */
      partialTotal: number;
      /** The every-word MATCH expression, and (when it ran) the any-word one: excerpts highlight each hit's own. */
      match: string;
      partialMatch?: string;
      rows?: ReadonlyMap<number, HitRow>;
    }
  | { ok: false; reason: string };

/** The index spelling of every function word, so a stemmed query word is known for one. */
let stopTerms: Set<string> | undefined;

function isStopPhrase(phrase: string): boolean {
  stopTerms ??= new Set([...STOP_WORDS].map(analyze));
  return stopTerms.has(phrase);
}

/** Document counts per store version (the cache must never answer for another state); one per connection. */
const countsByDb = new WeakMap<Database, DocumentCounts>();

/**
 * searchFts, then, when it found fewer than `limit` rows, the best any-word matches among the
 * rows it did not find. `version` is the store's (Store.version), under which document counts
 * are cached; without it they are counted afresh.
 */
export function searchWithPartial(db: Database, table: string, req: SearchRequest, version?: number): FilledOutcome {
  const first = partialFirst(db, table, req, version);
  if (first && 'outcome' in first) return first.outcome;
  const strict = searchFts(db, table, req);
  if (!strict.ok) return strict;
  const all: MatchedHit[] = strict.hits.map((h) => ({ ...h, matched: 'all' }));
  const done = { ok: true as const, hits: all, total: strict.total, partialTotal: 0, match: strict.match, ...(strict.rows ? { rows: strict.rows } : {}) };
  const need = req.limit - strict.hits.length;
  if (need <= 0) return done;
  const anyWord = first?.anyWord ?? anyWordMatch(db, table, req.query, version);
  if (anyWord === undefined) return done;
  const { match, counts } = anyWord;
  // No row holds a kept word but not every word: the any-word search would find the same rows.
  if (partialProvablyEmpty(anyWord, strict.total)) return { ...done, partialMatch: match };
  const partial = first?.partial ?? searchFts(db, table, { ...req, match, anyPhrase: true, docsWithPhrase: counts });
  if (!partial.ok) return done;
  const rest = partialOnly(partial.hits, strict.hits, need);
  const rows = strict.rows && partial.rows ? new Map([...strict.rows, ...partial.rows]) : undefined;
  return {
    ...done,
    hits: [...all, ...rest.map((h): MatchedHit => ({ ...h, matched: 'partial' }))],
    // Every every-word match holds the kept words too, so it is among the any-word matches.
    partialTotal: partial.total - strict.total,
    partialMatch: match,
    ...(rows ? { rows } : {}),
  };
}

/**
 * The any-word pass first, when it must run anyway and may spare the every-word one: a query
 * whose rarest kept word is in fewer rows than `limit` has fewer every-word hits than that (each
 * holds every kept word), so the list is filled whatever the every-word pass finds. Every
 * every-word row holds every kept word, so when no any-word row holds them all, there is none,
 * and the every-word pass — whose doclists include the function words and the commonest words,
 * the longest of all — is not run. Only with counts already held for this store version (no
 * statement of their own before a search that may not need them), with two kept words or more
 * in some row (with one, each of its rows holds every kept word, and the any-word pass is often
 * skipped after the every-word one: partialProvablyEmpty), and not for a prefix, whose any-word
 * pieces are each of the stems it stands for. When some row holds every kept word, the any-word
 * pass's outcome is handed back for the caller to use after the every-word pass; undefined when
 * it did not run.
 */
export function partialFirst(db: Database, table: string, req: SearchRequest, version: number | undefined): { outcome: FilledOutcome } | { anyWord: AnyWordMatch; partial: SearchOutcome } | undefined {
  if (version === undefined || req.match !== undefined || req.anyPhrase) return undefined;
  const parsed = parseMatchQuery(req.query);
  if (!parsed || parsed.anyMatch === parsed.match || parsed.match.includes('*')) return undefined;
  const counts = countsByDb.get(db);
  if (!counts?.holds(version, table, anyWordPieces(parsed.anyMatch))) return undefined;
  const anyWord = anyWordMatch(db, table, req.query, version);
  const found = anyWord?.counts?.filter((n) => n > 0) ?? [];
  if (!anyWord || found.length < 2 || Math.min(...found) >= req.limit) return undefined;
  const partial = searchFts(db, table, { ...req, match: anyWord.match, anyPhrase: true, docsWithPhrase: anyWord.counts });
  if (!partial.ok || (partial.holdingEvery ?? (partial.total === 0 ? 0 : undefined)) !== 0) return { anyWord, partial };
  return {
    outcome: {
      ok: true,
      hits: partial.hits.map((h): MatchedHit => ({ ...h, matched: 'partial' })),
      total: 0,
      partialTotal: partial.total,
      match: parsed.match,
      partialMatch: anyWord.match,
      ...(partial.rows ? { rows: partial.rows } : {}),
    },
  };
}

/**
 * The best any-word hits that are not every-word ones. Fewer every-word hits than the limit
 * means all of them are in `strict`, and each is an any-word match too: asked for `limit` hits,
 * the any-word search returns at least `need` others.
 */
export function partialOnly<T extends Ranked>(anyWord: readonly T[], strict: readonly Ranked[], need: number): T[] {
  const found = new Set(strict.map((h) => h.docid));
  return anyWord.filter((h) => !found.has(h.docid)).slice(0, need);
}

/** An any-word MATCH expression, with at most how many rows match it (the kept words' document counts summed) when known. */
export interface AnyWordMatch {
  match: string;
  atMost: number | undefined;
  /** Each phrase's document count, in the expression's order, when known: searchFts's `docsWithPhrase`. */
  counts: number[] | undefined;
}

/**
 * Whether the any-word search can find no row beyond the `strictTotal` every-word ones: each
 * every-word row holds every kept word, so it is among the any-word rows, which number at most
 * `atMost`. A query of two words whose commoner one is pruned and whose rarer one occurs only
 * beside it ends here, without a second pass over the doclists.
 */
export function partialProvablyEmpty(anyWord: AnyWordMatch, strictTotal: number): boolean {
  return anyWord.atMost !== undefined && anyWord.atMost <= strictTotal;
}

/**
 * The any-word MATCH expression for a query over `table` (its words OR'ed, function words and
 * the commonest words pruned), or undefined when the query is one phrase, whose partial
 * matches are its matches.
 */
export function anyWordMatch(db: Database, table: string, query: string, version?: number): AnyWordMatch | undefined {
  const parsed = parseMatchQuery(query);
  if (!parsed || parsed.anyMatch === parsed.match) return undefined;
  const pieces = anyWordPieces(parsed.anyMatch);
  const counts = version === undefined ? new DocumentCounts() : (countsByDb.get(db) ?? new DocumentCounts());
  if (version !== undefined) countsByDb.set(db, counts);
  const pruned = prunedWords(db, version ?? -1, table, pieces, counts);
  return { match: pruned.kept.map((p) => `"${p}"`).join(' OR '), atMost: pruned.matches, counts: pruned.keptCounts };
}

/** The any-word pieces (a word, a quoted run, each pair of a CJK run) without their quotes; function words left out unless nothing else is left. */
function anyWordPieces(anyMatch: string): string[] {
  const pieces = [...anyMatch.matchAll(/"([^"]*)"/g)].map((m) => m[1] as string);
  const content = pieces.filter((p) => !isStopPhrase(p));
  return content.length ? content : pieces;
}

/** Each hit's excerpt, highlighting what it matched: every word for an every-word hit, the words it holds for a partial one. */
export function matchedExcerpts(found: { hits: readonly MatchedHit[]; match: string; partialMatch?: string | undefined }, texts: ReadonlyMap<number, string>, tokens: number): Map<number, string> {
  const partial = new Set(found.hits.filter((h) => h.matched === 'partial').map((h) => h.docid));
  if (!partial.size || found.partialMatch === undefined) return excerptsOf(found.match, texts, tokens);
  const split = (want: boolean) => new Map([...texts].filter(([id]) => partial.has(id) === want));
  return new Map([...excerptsOf(found.match, split(false), tokens), ...excerptsOf(found.partialMatch, split(true), tokens)]);
}
