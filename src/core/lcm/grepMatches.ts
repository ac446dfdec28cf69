import { HISTORY_FTS } from '../history/historySchema';
import { columnSource } from '../search/contentColumns';
import type { Ranked } from '../search/rank';
import type { Matched } from '../search/partialMatches';
import { type Database, type SqlValue } from '../store/sqlite';
import { withCachedStatement } from '../store/statementCache';
import { iso } from '../text/time';
import { LCM_SUMMARY_FTS } from './lcmSchema';

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
  /** full_text only: "all" when the text holds every word of the pattern, "partial" for a best any-word match filling up the list. */
  matched?: Matched;
}

export type Source = 'message' | 'summary';

export interface Hit {
  source: Source;
  ranked: Ranked;
  snippet?: string;
  /** full_text: whether the hit holds every word of the pattern or only some (partialMatches.ts). */
  matched?: Matched;
}

/** The excerpts of one source's shown hits from their indexed texts (docid → body). */
export type Excerpter = (source: Source, texts: ReadonlyMap<number, string>) => ReadonlyMap<number, string>;

/** Each source's FTS4 table, whose `body` the excerpts read, and the column its docid joins. */
const BODIES: Record<Source, { table: string; key: string }> = {
  message: { table: HISTORY_FTS, key: 'e.id' },
  summary: { table: LCM_SUMMARY_FTS, key: 'x.n' },
};

/**
 * The shown fields of the hits. A statement costs about as much to compile as to run on 50
 * rows, and a short search's whole budget is a few of them: so one statement per source, each
 * bringing its conversation number along, and none for a source without hits. Rows come as
 * arrays and the ids as one JSON array: an object per row cost as much as the statement itself
 * (50 messages on the 1 GB bench store: ~0.19 ms as objects, ~0.09 as arrays). With `excerpt`
 * (full text), the same statement reads each hit's indexed text for its excerpt, where a
 * statement of its own cost ~0.2 ms more; only the shown hits are excerpted.
 */
export function presentHits(db: Database, hits: readonly Hit[], excerpt?: Excerpter): GrepMatch[] {
  const rowsOf = (source: Source, sql: (body: string, join: string) => string) => {
    const ids = hits.filter((h) => h.source === source).map((h) => h.ranked.docid);
    if (!ids.length) return { rows: new Map<number, SqlValue[]>(), snippets: undefined };
    const { table, key } = BODIES[source];
    const body = excerpt && columnSource(db, table, 'body');
    // The statement's text is the same on every call (the ids are one parameter): it is kept compiled.
    const rows = new Map<number, SqlValue[]>();
    withCachedStatement(db, sql(body ? `, f.${body.column}` : '', body ? `LEFT JOIN ${body.from} f ON f.docid = ${key}` : ''), [JSON.stringify(ids)], (stmt) => {
      while (stmt.step()) {
        const r = stmt.get();
        rows.set(Number(r[0]), r);
      }
    });
    // A missing or NULL body is the empty text, as snippets() reads it.
    const texts = excerpt && new Map([...rows].map(([id, r]) => [id, r[5] === null || r[5] === undefined ? '' : String(r[5])]));
    return { rows, snippets: texts && excerpt?.(source, texts) };
  };
  const list = 'SELECT value FROM json_each(?)';
  // LEFT JOIN sessions: a hit whose session row were missing is still shown, as conversation 0.
  const messages = rowsOf('message', (body, join) => `SELECT e.id, c.rowid, e.kind, e.tool_name, src.summary_id${body} FROM events e LEFT JOIN sessions c ON c.id = e.session_id LEFT JOIN lcm_summary_sources src ON src.event_id = e.id ${join} WHERE e.id IN (${list})`);
  const summaries = rowsOf('summary', (body, join) => `SELECT x.n, c.rowid, x.id, x.depth, x.kind${body} FROM lcm_summaries x LEFT JOIN sessions c ON c.id = x.session_id ${join} WHERE x.n IN (${list})`);
  const conv = (v: SqlValue | undefined) => (v === null || v === undefined ? 0 : Number(v));
  return hits.flatMap((h): GrepMatch[] => {
    const createdAt = iso(h.ranked.createdAt);
    if (h.source === 'message') {
      const r = messages.rows.get(h.ranked.docid);
      if (!r) return [];
      const [, c, kind, tool, summary] = r;
      const snippet = messages.snippets ? (messages.snippets.get(h.ranked.docid) ?? '') : (h.snippet ?? '');
      return [{ id: h.ranked.docid, type: 'message', snippet, conversationId: conv(c), createdAt, role: String(kind), toolName: tool === null ? null : String(tool), coveredBy: summary === null ? null : String(summary), ...(h.matched ? { matched: h.matched } : {}) }];
    }
    const r = summaries.rows.get(h.ranked.docid);
    if (!r) return [];
    const [, c, sid, depth, kind] = r;
    const id = String(sid);
    const snippet = summaries.snippets ? (summaries.snippets.get(h.ranked.docid) ?? '') : (h.snippet ?? '');
    return [{ id, type: 'summary', snippet, conversationId: conv(c), createdAt, depth: Number(depth), kind: String(kind), summaryId: id, ...(h.matched ? { matched: h.matched } : {}) }];
  });
}
