import type { Ranked } from '../search/rank';
import { queryRows, type Database, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';

/** One lcm_grep match as the tool returns it. */
export interface GrepMatch {
  id: number | string;
  type: 'message' | 'summary';
  snippet: string;
  conversationId: number;
  createdAt: string;
  /** Messages: who spoke (user, assistant, tool_call, tool_result…), the tool, and the leaf summary that covers it. */
  role?: string;
  toolName?: string | null;
  coveredBy?: string | null;
  depth?: number;
  kind?: string;
  summaryId?: string;
}

export type Source = 'message' | 'summary';

export interface Hit {
  source: Source;
  ranked: Ranked;
  snippet?: string;
}

/**
 * The shown fields of the hits. A statement costs about as much to compile as to run on 50
 * rows, and a short search's whole budget is a few of them: so one statement per source, each
 * bringing its conversation number along, and none for a source without hits.
 */
export function presentHits(db: Database, hits: readonly Hit[]): GrepMatch[] {
  const msgIds = hits.filter((h) => h.source === 'message').map((h) => h.ranked.docid);
  const sumIds = hits.filter((h) => h.source === 'summary').map((h) => h.ranked.docid);
  const rowsOf = (ids: number[], sql: (list: string) => string) => (ids.length ? queryRows(db, sql(ids.map(() => '?').join(',')), ids) : []);
  // LEFT JOIN sessions: a hit whose session row were missing is still shown, as conversation 0.
  const messages = new Map(rowsOf(msgIds, (list) => `SELECT e.id, c.rowid AS conv, e.kind, e.tool_name, src.summary_id FROM events e LEFT JOIN sessions c ON c.id = e.session_id LEFT JOIN lcm_summary_sources src ON src.event_id = e.id WHERE e.id IN (${list})`).map((r) => [Number(r.id), r]));
  const summaries = new Map(rowsOf(sumIds, (list) => `SELECT x.n, x.id, c.rowid AS conv, x.depth, x.kind FROM lcm_summaries x LEFT JOIN sessions c ON c.id = x.session_id WHERE x.n IN (${list})`).map((r) => [Number(r.n), r]));
  const conv = (r: Record<string, SqlValue>) => (r.conv === null || r.conv === undefined ? 0 : Number(r.conv));
  return hits.flatMap((h): GrepMatch[] => {
    const createdAt = iso(h.ranked.createdAt);
    if (h.source === 'message') {
      const r = messages.get(h.ranked.docid);
      if (!r) return [];
      const role = String(r.kind);
      return [{ id: h.ranked.docid, type: 'message', snippet: h.snippet ?? '', conversationId: conv(r), createdAt, role, toolName: r.tool_name === null ? null : String(r.tool_name), coveredBy: r.summary_id === null ? null : String(r.summary_id) }];
    }
    const r = summaries.get(h.ranked.docid);
    if (!r) return [];
    const id = String(r.id);
    return [{ id, type: 'summary', snippet: h.snippet ?? '', conversationId: conv(r), createdAt, depth: Number(r.depth), kind: String(r.kind), summaryId: id }];
  });
}
