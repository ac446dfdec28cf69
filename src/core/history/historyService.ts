import { refuse, type Refusal } from '../refusal';
import { bodiesOf } from '../search/excerpts';
import { matchedExcerpts, searchWithPartial } from '../search/partialMatches';
import type { SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryRows, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import { eventHit, eventHitRows } from './eventHits';
import { HISTORY_FTS } from './historySchema';

/** Where a caller sits, so "this session" can be found honestly rather than guessed. */
export interface SessionHint {
  client: string;
  workspace?: string | undefined;
}

export interface CurrentSession {
  id: string;
  source: string;
  title: string | null;
  workspace: string | null;
  /** How it was chosen, in words, so the model and the person can judge it. */
  how: string;
}

/** Recent runs considered by tool_list, as the spec says. */
export const TOOL_LIST_RUNS = 16;

const CLIENT_SOURCES: [RegExp, string][] = [
  [/claude/i, 'claude-code'],
  [/codex/i, 'codex'],
  [/copilot-cli/i, 'copilot-cli'],
  [/copilot|vscode/i, 'vscode-chat'],
];

/**
 * Reads over imported history: runs (the spec's task_id), their events, tool outputs, and
 * keyword search through the one scorer.
 */
export class HistoryService {
  constructor(private readonly store: Store) {}

  /**
   * "This session": the newest session of the caller's own kind (Claude Code for a client named
   * claude-code, VS Code chat for Copilot) in the caller's workspace; failing that, of its kind
   * anywhere; failing that, the newest session of all.
   */
  currentSession(hint: SessionHint): CurrentSession | undefined {
    const source = CLIENT_SOURCES.find(([re]) => re.test(hint.client))?.[1];
    const attempts: [string, SqlValue[], string][] = [];
    if (source && hint.workspace) attempts.push(['source = ? AND workspace = ?', [source, hint.workspace], `the newest ${source} session in ${hint.workspace}`]);
    if (source) attempts.push(['source = ?', [source], `the newest ${source} session`]);
    attempts.push(['1 = 1', [], 'the newest session of any source']);
    for (const [where, params, how] of attempts) {
      const row = queryRows(this.store.db, `SELECT id, source, title, workspace FROM sessions WHERE ${where} ORDER BY updated_at DESC LIMIT 1`, params)[0];
      if (row) return { id: String(row.id), source: String(row.source), title: nullable(row.title), workspace: nullable(row.workspace), how };
    }
    return undefined;
  }

  listRuns(sessionId: string, limit: number, since?: number) {
    const where = new Conditions('session_id = ?', sessionId).addIf(since, 'coalesce(ended_at, started_at, 0) >= ?');
    return queryRows(this.store.db, `SELECT id, seq, objective, started_at, ended_at, event_count, chars FROM runs WHERE ${where.sql} ORDER BY seq DESC LIMIT ?`, [...where.params, limit]).map((r) => ({
      task_id: String(r.id),
      seq: Number(r.seq),
      objective: nullable(r.objective),
      started_at: time(r.started_at),
      ended_at: time(r.ended_at),
      events: Number(r.event_count),
      chars: Number(r.chars),
    }));
  }

  /** The events of one run; `full` text comes from the blob store for anything that was too large to keep inline. */
  readRun(taskId: string) {
    const run = queryRows(this.store.db, 'SELECT id, session_id, objective, started_at, ended_at FROM runs WHERE id = ?', [taskId])[0];
    if (!run) return undefined;
    const events = queryRows(
      this.store.db,
      'SELECT seq, kind, text, blob, bytes, created_at, tool_name, call_id, tool_input, is_error FROM events WHERE run_id = ? ORDER BY seq',
      [taskId],
    ).map((e) => ({
      seq: Number(e.seq),
      kind: String(e.kind),
      text: this.fullText(e.text, e.blob),
      bytes: Number(e.bytes),
      at: time(e.created_at),
      tool_name: nullable(e.tool_name),
      call_id: nullable(e.call_id),
      tool_input: e.tool_input === null ? null : (JSON.parse(String(e.tool_input)) as unknown),
      is_error: Number(e.is_error) === 1,
    }));
    return { task_id: taskId, session_id: String(run.session_id), objective: nullable(run.objective), started_at: time(run.started_at), ended_at: time(run.ended_at), events };
  }

  /** Tool calls across the session's last runs, newest first: what was already paid for. */
  toolList(sessionId: string) {
    return queryRows(
      this.store.db,
      `SELECT r.id AS task_id, c.tool_name, c.tool_input, c.created_at, c.call_id,
         (SELECT res.bytes FROM events res WHERE res.run_id = c.run_id AND res.kind = 'tool_result' AND res.call_id = c.call_id LIMIT 1) AS result_bytes
       FROM events c JOIN (SELECT id FROM runs WHERE session_id = ? ORDER BY seq DESC LIMIT ${TOOL_LIST_RUNS}) r ON r.id = c.run_id
       WHERE c.kind = 'tool_call' ORDER BY c.seq DESC`,
      [sessionId],
    ).map((r) => ({
      task_id: String(r.task_id),
      name: String(r.tool_name ?? ''),
      input: r.tool_input === null ? null : (JSON.parse(String(r.tool_input)) as unknown),
      at: time(r.created_at),
      result_bytes: r.result_bytes === null ? null : Number(r.result_bytes),
    }));
  }

  /** One call's raw output: the result event linked to the run's (latest) call of that tool. */
  toolOutput(taskId: string, name: string): { ok: true; task_id: string; name: string; output: string; is_error: boolean; bytes: number } | Refusal {
    const row = queryRows(
      this.store.db,
      `SELECT res.text, res.blob, res.bytes, res.is_error FROM events c JOIN events res
         ON res.run_id = c.run_id AND res.kind = 'tool_result' AND res.call_id = c.call_id
       WHERE c.run_id = ? AND c.kind = 'tool_call' AND c.tool_name = ? ORDER BY c.seq DESC LIMIT 1`,
      [taskId, name],
    )[0];
    if (!row) return refuse(`no output of a "${name}" call in run ${taskId}; mode=tool_list shows the calls there are`);
    return { ok: true, task_id: taskId, name, output: this.fullText(row.text, row.blob), is_error: Number(row.is_error) === 1, bytes: Number(row.bytes) };
  }

  search(input: { query: string; limit: number; sort?: SearchSort; since?: number; before?: number; source?: string }) {
    const db = this.store.db;
    const found = searchWithPartial(db, HISTORY_FTS, { query: input.query, limit: input.limit, sort: input.sort ?? 'hybrid', scope: input.source, since: input.since, before: input.before, now: this.store.now }, this.store.version);
    if (!found.ok) return refuse(found.reason);
    const ids = found.hits.map((h) => h.docid);
    const excerpts = matchedExcerpts(found, bodiesOf(db, HISTORY_FTS, ids), 24);
    const rows = new Map(
      queryRows(db, `SELECT e.id, e.run_id, e.kind, e.tool_name, s.id AS session_id, s.source, s.title FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.id IN (${ids.map(() => '?').join(',') || 'NULL'})`, ids).map((r) => [Number(r.id), r]),
    );
    const hits = found.hits.map((h) => {
      const r = rows.get(h.docid);
      return {
        task_id: String(r?.run_id ?? ''),
        session_id: String(r?.session_id ?? ''),
        source: String(r?.source ?? ''),
        session_title: nullable(r?.title ?? null),
        kind: String(r?.kind ?? ''),
        tool_name: nullable(r?.tool_name ?? null),
        snippet: excerpts.get(h.docid) ?? '',
        at: iso(h.createdAt),
        score: Math.round(h.bm25 * 1000) / 1000,
        matched: h.matched,
      };
    });
    return { ok: true as const, total: found.total, shown: hits.length, hits };
  }

  /** Events as search hits (chat_history match=semantic), in the order given; ids not found are left out. */
  eventHits(ranked: readonly { id: number; similarity: number }[]) {
    const rows = eventHitRows(this.store.db, ranked.map((r) => r.id));
    return ranked.flatMap((h) => {
      const r = rows.get(h.id);
      return r ? [{ ...eventHit(r), similarity: h.similarity }] : [];
    });
  }

  counts() {
    const one = (sql: string) => Number(queryRows(this.store.db, sql)[0]?.n ?? 0);
    return { sessions: one('SELECT count(*) AS n FROM sessions'), runs: one('SELECT count(*) AS n FROM runs'), events: one('SELECT count(*) AS n FROM events') };
  }

  private fullText(inline: SqlValue | undefined, blob: SqlValue | undefined): string {
    if (typeof blob === 'string') {
      const full = this.store.blobs.get(blob);
      if (full) return full.toString('utf8');
    }
    return String(inline ?? '');
  }
}

/** A semantic hit has no matched words to centre an excerpt on: it shows the message's opening. */

function nullable(v: SqlValue | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}

function time(v: SqlValue | undefined): string | null {
  return v === null || v === undefined ? null : iso(Number(v));
}
