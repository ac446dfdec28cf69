import { queryRows, type Database, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';

/** Characters of a message shown as the snippet of a hit found without its words (by meaning, or next to a match). */
const TEXT_EXCERPT_CHARS = 240;

/** Events with their session, by id, as chat_history's search hits read them. */
export function eventHitRows(db: Database, ids: readonly number[]): Map<number, Record<string, SqlValue>> {
  const rows = queryRows(
    db,
    `SELECT e.id, e.run_id, e.kind, e.tool_name, e.text, e.created_at, s.id AS session_id, s.source, s.title FROM events e JOIN sessions s ON s.id = e.session_id
      WHERE e.id IN (SELECT value FROM json_each(?))`,
    [JSON.stringify(ids)],
  );
  return new Map(rows.map((r) => [Number(r.id), r]));
}

/** One event as a search hit; `snippet` when its matched words were highlighted, else the start of its text. */
export function eventHit(r: Record<string, SqlValue>, snippet?: string) {
  const text = String(r.text ?? '');
  return {
    task_id: String(r.run_id),
    session_id: String(r.session_id),
    source: String(r.source ?? ''),
    session_title: r.title === null || r.title === undefined ? null : String(r.title),
    kind: String(r.kind),
    tool_name: r.tool_name === null || r.tool_name === undefined ? null : String(r.tool_name),
    snippet: snippet ?? (text.length > TEXT_EXCERPT_CHARS ? `${text.slice(0, TEXT_EXCERPT_CHARS)}…` : text),
    at: r.created_at === null || r.created_at === undefined ? null : iso(Number(r.created_at)),
  };
}
