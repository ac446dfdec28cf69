import { CHAPTERS_FTS } from '../chapters/chaptersSchema';
import { LCM_SUMMARY_FTS } from '../lcm/lcmSchema';
import type { Operation } from '../store/journal';
import { queryScalar, type Database } from '../store/sqlite';
import { HISTORY_FTS } from './historyIndex';

/**
 * A person forgot these imported sessions. Every row derived from them goes (events, runs, the
 * search index, summaries, chapters, withheld marks) and each leaves a tombstone, so the watcher
 * does not import the same transcript again seconds later. The ids are decided by the writer;
 * `scope` only records what the person asked, for the log.
 */
export interface SessionsForgotten extends Operation {
  op: 'history.sessions.forgotten';
  sessions: { id: string; file: string }[];
  scope: ForgetScope;
}

/** What a person asked to forget: one session, one workspace's sessions, or every session last active before a time. */
export type ForgetScope = { session: string } | { workspace: string } | { before: number };

/** A person asked for forgotten sessions to be imported again: their tombstones go and their files are read anew. */
export interface SessionsRemembered extends Operation {
  op: 'history.sessions.remembered';
  ids: string[];
}

/**
 * Raw tool outputs older than `before` lose their text (inline and blob) and leave the search
 * index; the events, their hashes (so a re-import does not bring the text back) and the summaries
 * built from them stay. `sources` null means every source. Replay selects the same events: the
 * choice depends only on the state the operation applies to.
 */
export interface ToolOutputsDropped extends Operation {
  op: 'history.tool_outputs.dropped';
  before: number;
  sources: string[] | null;
}

export const FORGOTTEN_MIGRATION = `
  CREATE TABLE forgotten_sessions (
    session_id TEXT PRIMARY KEY,
    file TEXT NOT NULL,
    forgotten_at INTEGER NOT NULL
  );
`;

/**
 * The touched search indexes are merged into one segment each after the deletes: an FTS4 delete
 * only adds a tombstone in a new segment, so the words of a forgotten text would otherwise stay in
 * the old segments and in every snapshot written after. What a forget frees is zeroed as it is
 * freed (secure_delete ON for its statements, where other writes run FAST: tuneConnection), so
 * every process that applies it drops the text from its memory at once, not at its next snapshot.
 */
function purging(db: Database, tables: readonly string[], fn: () => void): void {
  db.exec('PRAGMA secure_delete = ON');
  try {
    fn();
    for (const t of tables) db.run(`INSERT INTO ${t}(${t}) VALUES ('optimize')`);
  } finally {
    db.exec('PRAGMA secure_delete = FAST');
  }
}

export function applySessionsForgotten(db: Database, op: Operation): void {
  const f = op as SessionsForgotten;
  purging(db, [HISTORY_FTS, LCM_SUMMARY_FTS, CHAPTERS_FTS], () => {
    for (const s of f.sessions) forgetSession(db, s.id, s.file, f.at);
  });
}

function forgetSession(db: Database, id: string, file: string, at: number): void {
  db.run('INSERT INTO forgotten_sessions(session_id, file, forgotten_at) VALUES (?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET file = excluded.file, forgotten_at = excluded.forgotten_at', [id, file, at]);
  db.run(`DELETE FROM ${HISTORY_FTS} WHERE docid IN (SELECT id FROM events WHERE session_id = ?)`, [id]);
  db.run('DELETE FROM withheld_runs WHERE session_id = ?1 OR run_id IN (SELECT id FROM runs WHERE session_id = ?1)', [id]);
  db.run('DELETE FROM events WHERE session_id = ?', [id]);
  db.run('DELETE FROM runs WHERE session_id = ?', [id]);
  forgetSummaries(db, id);
  forgetChapters(db, id);
  db.run('DELETE FROM sessions WHERE id = ?', [id]);
  // The file is read again next time (its other sessions, if any, are still current); the tombstone skips this one.
  db.run('DELETE FROM import_files WHERE path = ?', [file]);
}

function forgetSummaries(db: Database, sessionId: string): void {
  const ids = "(SELECT id FROM lcm_summaries WHERE session_id = ?1)";
  db.run(`DELETE FROM ${LCM_SUMMARY_FTS} WHERE docid IN (SELECT n FROM lcm_summaries WHERE session_id = ?1)`, [sessionId]);
  db.run(`DELETE FROM lcm_summary_sources WHERE summary_id IN ${ids}`, [sessionId]);
  db.run(`DELETE FROM lcm_summary_parents WHERE parent_id IN ${ids} OR child_id IN ${ids}`, [sessionId]);
  db.run(`DELETE FROM lcm_summary_files WHERE summary_id IN ${ids}`, [sessionId]);
  db.run('DELETE FROM lcm_files WHERE session_id = ?', [sessionId]);
  db.run('DELETE FROM lcm_summaries WHERE session_id = ?', [sessionId]);
}

/** Chapters archived from the session, and the continue/fork children opened from it (their first message is its table of contents). */
function forgetChapters(db: Database, sessionId: string): void {
  db.run(`DELETE FROM ${CHAPTERS_FTS} WHERE docid IN (SELECT fts_docid FROM chapters WHERE session_id = ?1 UNION SELECT fts_docid FROM chapter_plans WHERE session_id = ?1)`, [sessionId]);
  db.run('DELETE FROM child_chapters WHERE chapter_id IN (SELECT id FROM chapters WHERE session_id = ?1) OR child_id IN (SELECT id FROM child_sessions WHERE parent_session_id = ?1)', [sessionId]);
  db.run('DELETE FROM child_sessions WHERE parent_session_id = ?', [sessionId]);
  db.run('UPDATE child_sessions SET linked_session_id = NULL, linked_at = NULL WHERE linked_session_id = ?', [sessionId]);
  db.run('DELETE FROM chapter_plans WHERE session_id = ?', [sessionId]);
  db.run('DELETE FROM chapters WHERE session_id = ?', [sessionId]);
}

export function applySessionsRemembered(db: Database, op: Operation): void {
  const r = op as SessionsRemembered;
  for (const id of r.ids) {
    const file = queryScalar(db, 'SELECT file FROM forgotten_sessions WHERE session_id = ?', [id]);
    if (typeof file === 'string') db.run('DELETE FROM import_files WHERE path = ?', [file]);
    db.run('DELETE FROM forgotten_sessions WHERE session_id = ?', [id]);
  }
}

/** The events a `history.tool_outputs.dropped` at `before` for `sources` empties: tool results with a time before it that still hold text. */
export function droppableOutputsWhere(sources: readonly string[] | null): string {
  const bySource = sources ? ` AND session_id IN (SELECT id FROM sessions WHERE source IN (SELECT value FROM json_each(?2)))` : '';
  return `kind = 'tool_result' AND created_at IS NOT NULL AND created_at < ?1 AND (text != '' OR blob IS NOT NULL)${bySource}`;
}

export function applyToolOutputsDropped(db: Database, op: Operation): void {
  const d = op as ToolOutputsDropped;
  const where = droppableOutputsWhere(d.sources);
  const params = d.sources ? [d.before, JSON.stringify(d.sources)] : [d.before];
  purging(db, [HISTORY_FTS], () => {
    // The entries go first: FTS4 reads the terms it deletes from the events (historyIndex.ts).
    db.run(`DELETE FROM ${HISTORY_FTS} WHERE docid IN (SELECT id FROM events WHERE ${where})`, params);
    db.run(`UPDATE events SET text = '', blob = NULL, indexed_at = NULL, terms = NULL WHERE ${where}`, params);
  });
}

/** The set of session ids forgotten so far (read inside a commit's decide, so on the latest state). */
export function isForgotten(db: Database, sessionId: string): boolean {
  return queryScalar(db, 'SELECT 1 FROM forgotten_sessions WHERE session_id = ?', [sessionId]) !== undefined;
}
