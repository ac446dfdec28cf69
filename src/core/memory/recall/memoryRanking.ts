import { analyze } from '../../text/analyzer';
import { readByDocid } from '../../search/contentColumns';
import { searchFts } from '../../search/ftsSearch';
import { creditNeighbours, fuseScores } from '../../search/fusion';
import type { Ranked } from '../../search/rank';
import type { Database } from '../../store/sqlite';
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

export interface KeywordMatches {
  hits: Ranked[];
  /** Matches beyond the ones ranked for this reply. */
  unranked: number;
}

export function keywordMatches(db: Database, version: number, now: number, words: string[], scope: string | undefined, maxTokens: number, counts: DocumentCounts): KeywordMatches {
  // Counted, pruned and searched in the index's own spelling (each word's analyzed terms, a phrase).
  const terms = [...new Set(words.map(analyze).filter((t) => t !== ''))];
  const { kept, matches, keptCounts } = prunedWords(db, version, MEMORY_FTS, terms, counts);
  // Even the rarest word is in most memories: rank its newest matches, say so, count the rest.
  const window = matches !== undefined && matches > MATCH_BUDGET ? newestWindow(db, MEMORY_FTS, kept, MATCH_BUDGET) : undefined;
  const found = searchFts(db, MEMORY_FTS, {
    query: kept.join(' '),
    match: kept.map((t) => `"${t}"`).join(' OR '),
    limit: Math.max(SCORED_MATCHES, noteLimit(maxTokens)),
    ...(scope !== undefined ? { scope } : {}),
    now,
    anyPhrase: true,
    docsWithPhrase: keptCounts,
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

/**
 * The request's candidates, best first (ties: the newer row). `neighbours`: credit each passage
 * with what was written next to it (get_context, which hands an agent context); search_memory
 * leaves it off, so its hits are the memories themselves that match, by meaning or by word.
 * `read`: what `readAround` already read for some of the candidates (get_context reads it for
 * the keyword matches while the query is embedded); the rest are read here.
 */
export function rankMemories(db: Database, keyword: readonly Ranked[], semantic: readonly NearestHit[], neighbours: boolean, read?: ReadAround): Candidate[] {
  const base = fuseScores(keyword, semantic);
  const known = refsByMeaning(semantic);
  return neighbours ? withNeighbours(db, base, known, read) : sortedCandidates(base, refsOf(db, [...base.keys()], known));
}

/**
 * The refs of the semantic hits that need no read: a fact's vector key is `fact:<id>` and a
 * day-log entry's is its id, which is what their memory_fts rows hold as ref (semanticCorpora's
 * MEMORY_ITEMS; memorySchema.ts and vault/indexRows.ts write the rows), and a hit with a docid
 * was resolved from its live row. A note chunk's key names its file and place, its ref the
 * note's path, so a chunk's ref is read.
 */
function refsByMeaning(semantic: readonly NearestHit[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const h of semantic) if (h.docid !== null && (h.key.startsWith('fact:') || h.key.startsWith('entry:'))) out.set(h.docid, h.key);
  return out;
}

export interface Candidate {
  docid: number;
  ref: string;
  score: number;
}

/** Each given row's ref and the rows next to it: all that crediting neighbours reads of a candidate. */
export interface ReadAround {
  /** The docids read, found or not. */
  asked: Set<number>;
  refs: Map<number, string>;
  around: Map<number, number[]>;
}

/** What crediting neighbours needs of these rows (refsOf and neighbourDocids are per row, so reading some early changes nothing). */
export function readAround(db: Database, docids: readonly number[], had?: ReadAround, known?: ReadonlyMap<number, string>): ReadAround {
  const asked = new Set(had?.asked);
  const refs = new Map(had?.refs);
  const around = new Map(had?.around);
  const fresh = docids.filter((d) => !asked.has(d));
  if (!fresh.length) return { asked, refs, around };
  for (const d of fresh) asked.add(d);
  const found = refsOf(db, fresh, known);
  for (const [d, r] of found) refs.set(d, r);
  const entryIds = fresh.map((d) => found.get(d) ?? '').filter((r) => r.startsWith('entry:'));
  const chunkDocids = fresh.filter((d) => (found.get(d) ?? '').startsWith('note:'));
  for (const [d, n] of neighbourDocids(db, entryIds, chunkDocids)) around.set(d, n);
  return { asked, refs, around };
}

/** The candidates with what was written next to them in the same day log or note credited (fusion.ts). */
function withNeighbours(db: Database, base: ReadonlyMap<number, number>, known: ReadonlyMap<number, string>, had?: ReadAround): Candidate[] {
  if (!base.size) return [];
  const { refs, around } = readAround(db, [...base.keys()], had, known);
  const score = creditNeighbours(base, around);
  for (const [d, r] of refsOf(db, [...score.keys()].filter((d) => !refs.has(d)))) refs.set(d, r);
  return sortedCandidates(score, refs);
}

function sortedCandidates(score: ReadonlyMap<number, number>, refs: ReadonlyMap<number, string>): Candidate[] {
  return [...score]
    .filter(([d]) => refs.has(d))
    .map(([docid, s]) => ({ docid, ref: refs.get(docid) as string, score: s }))
    .sort((a, b) => b.score - a.score || b.docid - a.docid);
}

/** The memory_fts ref of each of `docids` that has a row, those in `known` taken from it. */
function refsOf(db: Database, docids: readonly number[], known?: ReadonlyMap<number, string>): Map<number, string> {
  const out = new Map<number, string>();
  const unknown = known?.size ? docids.filter((d) => !known.has(d)) : docids;
  if (unknown.length) readByDocid(db, MEMORY_FTS, unknown, ['ref'], false, (v) => out.set(Number(v[0]), String(v[1])));
  if (known?.size) for (const d of docids) if (known.has(d)) out.set(d, known.get(d) as string);
  return out;
}
