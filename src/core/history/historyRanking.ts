import { bodiesOf } from '../search/excerpts';
import { creditNeighbours, fuseScores } from '../search/fusion';
import { matchedExcerpts, searchWithPartial, type Matched } from '../search/partialMatches';
import { queryRows, type Database } from '../store/sqlite';
import { eventHit, eventHitRows } from './eventHits';
import { HISTORY_FTS } from './historySchema';

/** Keyword matches scored before semantic candidates and neighbours join them. */
const KEYWORD_POOL = 200;
/** The message kinds a conversation is made of: a neighbour is the message said just before or after. */
const MESSAGE_KINDS = ['user', 'assistant'];

export interface FusedRequest {
  query: string;
  limit: number;
  since?: number | undefined;
  before?: number | undefined;
  source?: string | undefined;
  now: number;
}

/** How a hit was found: every word or some of them matched, its meaning was close, or it was said next to a hit. */
export type FoundBy = Matched | 'meaning' | 'next to a match';

/**
 * chat_history's default search: the keyword matches (every word, then the best partial ones)
 * and the messages closest in meaning fused on one scale, then each message credited with part
 * of the score of the messages said just before and after it in its session (fusion.ts). A
 * question is often answered in the reply after the message that shares its words.
 */
export function fusedHistorySearch(db: Database, version: number, req: FusedRequest, semantic: readonly { docid: number | null; similarity: number }[]) {
  const found = searchWithPartial(db, HISTORY_FTS, { query: req.query, limit: KEYWORD_POOL, sort: 'relevance', scope: req.source, since: req.since, before: req.before, now: req.now }, version);
  if (!found.ok) return found;
  const base = fuseScores(found.hits, semantic);
  const score = creditNeighbours(base, messageNeighbours(db, [...base.keys()], req));
  const top = [...score].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, req.limit);
  const ids = top.map(([id]) => id);
  const keyword = new Map(found.hits.map((h) => [h.docid, h.matched]));
  const similar = new Set(semantic.filter((s) => s.similarity > 0).map((s) => s.docid));
  const excerpts = matchedExcerpts({ ...found, hits: found.hits.filter((h) => ids.includes(h.docid)) }, bodiesOf(db, HISTORY_FTS, ids.filter((id) => keyword.has(id))), 24);
  const rows = eventHitRows(db, ids);
  const hits = top.flatMap(([id, s]) => {
    const r = rows.get(id);
    if (!r) return [];
    const foundBy: FoundBy = keyword.get(id) ?? (similar.has(id) ? 'meaning' : 'next to a match');
    return [{ ...eventHit(r, excerpts.get(id)), score: Math.round(s * 1000) / 1000, matched: foundBy }];
  });
  return { ok: true as const, total: found.total, shown: hits.length, hits };
}

/** For each event, the message events just before and after it in its session (within the time range). */
function messageNeighbours(db: Database, ids: readonly number[], range: { since?: number | undefined; before?: number | undefined }): Map<number, number[]> {
  const out = new Map<number, number[]>();
  if (!ids.length) return out;
  const kinds = MESSAGE_KINDS.map((k) => `'${k}'`).join(',');
  const within = `${range.since !== undefined ? ' AND p.created_at >= ?' : ''}${range.before !== undefined ? ' AND p.created_at < ?' : ''}`;
  const bounds = [...(range.since !== undefined ? [range.since] : []), ...(range.before !== undefined ? [range.before] : [])];
  const rows = queryRows(
    db,
    `SELECT e.id,
      (SELECT p.id FROM events p WHERE p.session_id = e.session_id AND p.seq < e.seq AND p.kind IN (${kinds})${within} ORDER BY p.seq DESC LIMIT 1) AS prev,
      (SELECT p.id FROM events p WHERE p.session_id = e.session_id AND p.seq > e.seq AND p.kind IN (${kinds})${within} ORDER BY p.seq LIMIT 1) AS next
    FROM events e WHERE e.id IN (SELECT value FROM json_each(?))`,
    [...bounds, ...bounds, JSON.stringify(ids)],
  );
  for (const r of rows) {
    const around = [r.prev, r.next].filter((d): d is number => typeof d === 'number');
    if (around.length) out.set(Number(r.id), around);
  }
  return out;
}
