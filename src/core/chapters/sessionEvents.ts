import type { Store } from '../store/store';
import { queryRows, type SqlValue } from '../store/sqlite';
import { countTokens } from '../text/tokens';

/** One imported event as chapters see it: inline text always, the full text only when asked for. */
export interface ChapterEvent {
  seq: number;
  runId: string;
  kind: string;
  /** Inline text (the first 4,000 characters when the rest is in the blob store). */
  text: string;
  blob: string | null;
  bytes: number;
  at: number | null;
  /** The tool's name; for a result, taken from its call when the source recorded it only there. */
  toolName: string | null;
  callId: string | null;
  toolInput: string | null;
  isError: boolean;
}

export interface SessionInfo {
  id: string;
  source: string;
  title: string | null;
  workspace: string | null;
  startedAt: number | null;
  updatedAt: number | null;
}

export function sessionInfo(store: Store, sessionId: string): SessionInfo | undefined {
  const r = queryRows(store.db, 'SELECT id, source, title, workspace, started_at, updated_at FROM sessions WHERE id = ?', [sessionId])[0];
  if (!r) return undefined;
  return {
    id: String(r.id),
    source: String(r.source),
    title: str(r.title),
    workspace: str(r.workspace),
    startedAt: num(r.started_at),
    updatedAt: num(r.updated_at),
  };
}

/** A session's events in seq order, optionally only those in [fromSeq, toSeq]. */
export function loadEvents(store: Store, sessionId: string, fromSeq = 0, toSeq = Number.MAX_SAFE_INTEGER): ChapterEvent[] {
  const rows = queryRows(
    store.db,
    `SELECT seq, run_id, kind, text, blob, bytes, created_at, tool_name, call_id, tool_input, is_error
     FROM events WHERE session_id = ? AND seq >= ? AND seq <= ? ORDER BY seq`,
    [sessionId, fromSeq, toSeq],
  );
  const callNames = new Map<string, string>();
  for (const r of queryRows(store.db, "SELECT call_id, tool_name FROM events WHERE session_id = ? AND kind = 'tool_call' AND call_id IS NOT NULL", [sessionId])) {
    if (r.tool_name !== null) callNames.set(String(r.call_id), String(r.tool_name));
  }
  return rows.map((r) => {
    const callId = str(r.call_id);
    return {
      seq: Number(r.seq),
      runId: String(r.run_id),
      kind: String(r.kind),
      text: String(r.text ?? ''),
      blob: str(r.blob),
      bytes: Number(r.bytes),
      at: num(r.created_at),
      toolName: str(r.tool_name) ?? (callId ? (callNames.get(callId) ?? null) : null),
      callId,
      toolInput: str(r.tool_input),
      isError: Number(r.is_error) === 1,
    };
  });
}

/** The whole text of an event: the blob when the source text was too large to keep inline. */
export function fullText(store: Store, e: ChapterEvent): string {
  if (e.blob) {
    const full = store.blobs.get(e.blob);
    if (full) return full.toString('utf8');
  }
  return e.text;
}

/** Text sampled from a session to learn its characters per token; tokenizing all of it costs about a second per megabyte. */
const SAMPLE_CHARS = 64_000;

export type TokenEstimate = (e: ChapterEvent) => number;

/**
 * Token estimates for a session's events without reading blobs or tokenizing every event: the
 * real tokenizer runs over an even sample of the session's text (prose, code and JSON differ by
 * almost 2×, so the sample is the session's own), and each event is its full length in
 * characters divided by that ratio. Chapters get exact counts when they are archived.
 */
export function tokenEstimator(events: readonly ChapterEvent[]): TokenEstimate {
  // The start of evenly spaced events, so one long output cannot be the whole sample.
  const perEvent = Math.max(200, Math.floor(SAMPLE_CHARS / Math.max(1, events.length)));
  const step = Math.max(1, Math.ceil((events.length * perEvent) / SAMPLE_CHARS));
  let sample = '';
  for (let i = 0; i < events.length && sample.length < SAMPLE_CHARS; i += step) sample += `${(events[i] as ChapterEvent).text.slice(0, perEvent)}\n`;
  const tokens = sample ? countTokens(sample) : 0;
  const charsPerToken = tokens ? Math.max(1, sample.length / tokens) : 4;
  return (e) => {
    const chars = e.blob ? Math.round(e.bytes * (e.text.length / Math.max(1, Buffer.byteLength(e.text, 'utf8')))) : e.text.length;
    return Math.ceil(chars / charsPerToken);
  };
}

function str(v: SqlValue | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}

function num(v: SqlValue | undefined): number | null {
  return v === null || v === undefined ? null : Number(v);
}
