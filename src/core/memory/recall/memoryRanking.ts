import { analyze } from '../../text/analyzer';
import { searchFts } from '../../search/ftsSearch';
import type { Ranked } from '../../search/rank';
import { queryRows, type Database } from '../../store/sqlite';
import { MEMORY_FTS } from '../memorySchema';
import type { NearestHit } from '../semantic/semanticService';
import { neighbourDocids } from './neighbours';
import { DocumentCounts, MATCH_BUDGET, newestWindow, prunedWords } from './queryPruning';

/**
 * How memories are ranked for a request, by get_context and search_memory alike: the keyword
 * matches (BM25 over any of the request's content words) and the semantic neighbours fused on
 * one scale, then each passage credited with part of the score of what was written next to it.
 */
/** Matches scored before neighbours are added: past this many the rest hold too little of the request to reach the shown items. */
const SCORED_MATCHES = 200;
/** The share of a passage's relevance its neighbours in the same file gain (measured on LoCoMo: 0.4–0.6 is a plateau). */
const NEIGHBOUR_WEIGHT = 0.5;
/** A memory's semantic similarity counts this share of the request's best keyword score (measured on LoCoMo: 0.3–0.6 gain, 1 loses). */
const SEMANTIC_WEIGHT = 0.5;

export interface KeywordMatches {
  hits: Ranked[];
  /** Matches beyond the ones ranked for this reply. */
  unranked: number;
}

export function keywordMatches(db: Database, version: number, now: number, words: string[], scope: string | undefined, maxTokens: number, counts: DocumentCounts): KeywordMatches {
  // Counted, pruned and searched in the index's own spelling (each word's analyzed terms, a phrase).
  const terms = [...new Set(words.map(analyze).filter((t) => t !== ''))];
  const { kept, matches } = prunedWords(db, version, MEMORY_FTS, terms, counts);
  // Even the rarest word is in most memories: rank its newest matches, say so, count the rest.
  const window = matches !== undefined && matches > MATCH_BUDGET ? newestWindow(db, MEMORY_FTS, kept, MATCH_BUDGET) : undefined;
  const found = searchFts(db, MEMORY_FTS, {
    query: kept.join(' '),
    match: kept.map((t) => `"${t}"`).join(' OR '),
    limit: Math.max(SCORED_MATCHES, noteLimit(maxTokens)),
    ...(scope !== undefined ? { scope } : {}),
    now,
    anyPhrase: true,
    sort: 'relevance',
    ...(window !== undefined ? { minDocid: window } : {}),
  });
  if (!found.ok) return { hits: [], unranked: 0 };
  return { hits: found.hits, unranked: Math.max(found.total, window !== undefined ? (matches ?? 0) : 0) - found.hits.length };
}

/** Enough candidates to fill the largest budget with short items; more would only cost time. */
export function noteLimit(maxTokens: number): number {
  return Math.min(150, Math.max(40, Math.ceil(maxTokens / 25)));
}

/** What a semantic similarity adds to a memory's score, against the request's best BM25 (1 when no word matched). */
export function semanticShare(bestKeyword: number, similarity: number): number {
  return SEMANTIC_WEIGHT * (bestKeyword || 1) * similarity;
}

/**
 * The request's candidates, best first (ties: the newer row). `neighbours`: credit each passage
 * with what was written next to it (get_context, which hands an agent context); search_memory
 * leaves it off, so its hits are the memories themselves that match, by meaning or by word.
 */
export function rankMemories(db: Database, keyword: readonly Ranked[], semantic: readonly NearestHit[], neighbours: boolean): Candidate[] {
  const base = fused(keyword, semantic);
  return neighbours ? withNeighbours(db, base) : withRefs(db, base);
}

function withRefs(db: Database, base: ReadonlyMap<number, number>): Candidate[] {
  const refs = refsOf(db, [...base.keys()]);
  return sortedCandidates(base, refs);
}

export interface Candidate {
  docid: number;
  ref: string;
  score: number;
}

/**
 * Keyword and semantic candidates on one scale: a memory's BM25 plus SEMANTIC_WEIGHT × its
 * cosine similarity × the best BM25 of this request, so a close meaning counts for about half
 * of the best keyword match and a memory found both ways leads. Semantic alone (no word
 * matched) ranks by similarity.
 */
function fused(hits: readonly Ranked[], semantic: readonly NearestHit[]): Map<number, number> {
  const score = new Map<number, number>();
  let best = 0;
  for (const h of hits) {
    score.set(h.docid, h.bm25);
    best = Math.max(best, h.bm25);
  }
  for (const s of semantic) if (s.docid !== null && s.similarity > 0) score.set(s.docid, (score.get(s.docid) ?? 0) + semanticShare(best, s.similarity));
  return score;
}

/**
 * The candidates re-scored with what was written next to them: each entry or note chunk gains
 * NEIGHBOUR_WEIGHT of the score of the passages just before and after it in the same file,
 * and a neighbour that was no candidate itself enters with that share. Ties go to the newer row,
 * so the same store and request always give the same order.
 */
function withNeighbours(db: Database, base: ReadonlyMap<number, number>): Candidate[] {
  if (!base.size) return [];
  const refs = refsOf(db, [...base.keys()]);
  const score = new Map(base);
  const refOf = (d: number) => refs.get(d) ?? '';
  const docids = [...base.keys()];
  const entryIds = docids.map(refOf).filter((r) => r.startsWith('entry:'));
  const chunkDocids = docids.filter((d) => refOf(d).startsWith('note:'));
  const around = neighbourDocids(db, entryIds, chunkDocids);
  for (const [d, s] of base) for (const n of around.get(d) ?? []) score.set(n, (score.get(n) ?? 0) + NEIGHBOUR_WEIGHT * s);
  for (const [d, r] of refsOf(db, [...score.keys()].filter((d) => !refs.has(d)))) refs.set(d, r);
  return sortedCandidates(score, refs);
}

function sortedCandidates(score: ReadonlyMap<number, number>, refs: ReadonlyMap<number, string>): Candidate[] {
  return [...score]
    .filter(([d]) => refs.has(d))
    .map(([docid, s]) => ({ docid, ref: refs.get(docid) as string, score: s }))
    .sort((a, b) => b.score - a.score || b.docid - a.docid);
}

function refsOf(db: Database, docids: readonly number[]): Map<number, string> {
  if (!docids.length) return new Map();
  const rows = queryRows(db, `SELECT docid, ref FROM ${MEMORY_FTS} WHERE docid IN (SELECT value FROM json_each(?))`, [JSON.stringify(docids)]);
  return new Map(rows.map((r) => [Number(r.docid), String(r.ref)]));
}

