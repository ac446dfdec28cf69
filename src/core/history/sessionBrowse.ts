import type { Store } from '../store/store';
import { Conditions, queryRows, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';

export interface SessionListFilter {
  source?: string | undefined;
  workspace?: string | undefined;
  /** Epoch ms: sessions active at or after this. */
  since?: number | undefined;
  /** Epoch ms: sessions that started before this. */
  before?: number | undefined;
  limit: number;
}

export interface BrowsedSession {
  id: string;
  source: string;
  title: string | null;
  workspace: string | null;
  startedAt: string | null;
  updatedAt: string | null;
  events: number;
  chapters: number;
}

export interface BrowsedRow {
  seq: number;
  kind: string;
  preview: string;
  bytes: number;
  at: string | null;
  toolName: string | null;
  isError: boolean;
  /** A tool call's result event, folded into the call's row. */
  result: { seq: number; bytes: number; isError: boolean } | null;
}

export interface EventText {
  seq: number;
  kind: string;
  text: string;
  bytes: number;
  truncated: boolean;
  isError: boolean;
  callId: string | null;
}

const SUMMARY_COLUMNS = `s.id, s.source, s.title, s.workspace, s.started_at, s.updated_at,
  (SELECT count(*) FROM events e WHERE e.session_id = s.id) AS events,
  (SELECT count(*) FROM chapters c WHERE c.session_id = s.id) AS chapters`;

/**
 * Read-only views over imported sessions for people browsing them (the session-history panel):
 * sessions by recency with filters, the filter choices, and a session's rows with a preview of
 * each event. Search goes through HistoryService.search, the one scorer; nothing here ranks.
 */
export class SessionBrowse {
  constructor(private readonly store: Store) {}

  list(filter: SessionListFilter): { sessions: BrowsedSession[]; total: number } {
    const where = this.where(filter);
    const total = Number(queryRows(this.store.db, `SELECT count(*) AS n FROM sessions s WHERE ${where.sql}`, where.params)[0]?.n ?? 0);
    const rows = queryRows(this.store.db, `SELECT ${SUMMARY_COLUMNS} FROM sessions s WHERE ${where.sql} ORDER BY coalesce(s.updated_at, s.started_at, 0) DESC, s.id LIMIT ?`, [...where.params, filter.limit]);
    return { sessions: rows.map(toSummary), total };
  }

  /** The sessions named, in the order named; unknown ids and those outside the filter are left out. */
  summaries(ids: readonly string[], filter: Omit<SessionListFilter, 'limit'> = {}): BrowsedSession[] {
    if (!ids.length) return [];
    const where = this.where(filter).add(`s.id IN (${ids.map(() => '?').join(',')})`, ...ids);
    const byId = new Map(queryRows(this.store.db, `SELECT ${SUMMARY_COLUMNS} FROM sessions s WHERE ${where.sql}`, where.params).map((r) => [String(r.id), toSummary(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** How many runs (task_ids) each named session has; a session with none is absent. A plain object, so it crosses to a client as JSON. */
  runCounts(ids: readonly string[]): Record<string, number> {
    if (!ids.length) return {};
    const rows = queryRows(this.store.db, `SELECT session_id, count(*) AS n FROM runs WHERE session_id IN (${ids.map(() => '?').join(',')}) GROUP BY session_id`, [...ids]);
    return Object.fromEntries(rows.map((r) => [String(r.session_id), Number(r.n)]));
  }

  /** Every source and workspace with how many sessions each has: what the filters offer. */
  facets(): { sources: { name: string; sessions: number }[]; workspaces: { name: string; sessions: number }[] } {
    const facet = (column: 'source' | 'workspace') =>
      queryRows(this.store.db, `SELECT ${column} AS name, count(*) AS n FROM sessions WHERE ${column} IS NOT NULL AND ${column} != '' GROUP BY ${column} ORDER BY n DESC, ${column}`).map((r) => ({
        name: String(r.name),
        sessions: Number(r.n),
      }));
    return { sources: facet('source'), workspaces: facet('workspace') };
  }

  /**
   * A session's events in seq order with the first `previewChars` characters of each. A tool
   * result whose call is in the session is folded into the call's row, so a call shows what it
   * cost without a row of its own.
   */
  rows(sessionId: string, previewChars: number): BrowsedRow[] {
    const events = queryRows(
      this.store.db,
      'SELECT seq, kind, substr(text, 1, ?) AS preview, bytes, created_at, tool_name, call_id, is_error FROM events WHERE session_id = ? ORDER BY seq',
      [previewChars, sessionId],
    );
    const calls = new Map<string, BrowsedRow>();
    const rows: BrowsedRow[] = [];
    for (const e of events) {
      const kind = String(e.kind);
      const callId = e.call_id === null ? null : String(e.call_id);
      const row: BrowsedRow = {
        seq: Number(e.seq),
        kind,
        preview: String(e.preview ?? ''),
        bytes: Number(e.bytes),
        at: e.created_at === null ? null : iso(Number(e.created_at)),
        toolName: e.tool_name === null ? null : String(e.tool_name),
        isError: Number(e.is_error) === 1,
        result: null,
      };
      const call = kind === 'tool_result' && callId ? calls.get(callId) : undefined;
      if (call && !call.result) {
        call.result = { seq: row.seq, bytes: row.bytes, isError: row.isError };
        continue;
      }
      if (kind === 'tool_call' && callId) calls.set(callId, row);
      rows.push(row);
    }
    return rows;
  }

  /** One event's whole text (from the blob store when it was too large to keep inline), cut at `maxChars`. */
  eventText(sessionId: string, seq: number, maxChars: number): EventText | undefined {
    const r = queryRows(this.store.db, 'SELECT seq, kind, text, blob, bytes, is_error, call_id FROM events WHERE session_id = ? AND seq = ?', [sessionId, seq])[0];
    if (!r) return undefined;
    const full = typeof r.blob === 'string' ? (this.store.blobs.get(r.blob)?.toString('utf8') ?? String(r.text ?? '')) : String(r.text ?? '');
    return {
      seq: Number(r.seq),
      kind: String(r.kind),
      text: full.length > maxChars ? full.slice(0, maxChars) : full,
      bytes: Number(r.bytes),
      truncated: full.length > maxChars,
      isError: Number(r.is_error) === 1,
      callId: r.call_id === null ? null : String(r.call_id),
    };
  }

  /** The kind of one event (user, assistant, tool_call, …), without reading its text. */
  kindAt(sessionId: string, seq: number): string | undefined {
    const r = queryRows(this.store.db, 'SELECT kind FROM events WHERE session_id = ? AND seq = ?', [sessionId, seq])[0];
    return r ? String(r.kind) : undefined;
  }

  /** The result event of a tool call, by the call's id, within the session. */
  resultOf(sessionId: string, callId: string): number | undefined {
    const r = queryRows(this.store.db, "SELECT seq FROM events WHERE session_id = ? AND kind = 'tool_result' AND call_id = ? ORDER BY seq LIMIT 1", [sessionId, callId])[0];
    return r ? Number(r.seq) : undefined;
  }

  private where(filter: Omit<SessionListFilter, 'limit'>): Conditions {
    return new Conditions()
      .addIf(filter.source, 's.source = ?')
      .addIf(filter.workspace, 's.workspace = ?')
      .addIf(filter.since, 'coalesce(s.updated_at, s.started_at) >= ?')
      .addIf(filter.before, 'coalesce(s.started_at, s.updated_at) < ?');
  }
}

function toSummary(r: Record<string, SqlValue>): BrowsedSession {
  return {
    id: String(r.id),
    source: String(r.source),
    title: r.title === null ? null : String(r.title),
    workspace: r.workspace === null ? null : String(r.workspace),
    startedAt: r.started_at === null ? null : iso(Number(r.started_at)),
    updatedAt: r.updated_at === null ? null : iso(Number(r.updated_at)),
    events: Number(r.events),
    chapters: Number(r.chapters),
  };
}
