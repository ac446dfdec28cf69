import type { Operation } from '../store/journal';
import type { Store } from '../store/store';
import { queryRows, type Database } from '../store/sqlite';

/**
 * Which runs chat_history already withheld in which chat session. The spec allows a run to be
 * withheld at most once per session, so a second read returns it in full. A chat session
 * outlives the process that served the read (a window reload, a VS Code restart, another
 * window on the same store), so this is journaled in the history aggregate, not kept in memory.
 */
export interface RunsWithheld extends Operation {
  op: 'history.runs.withheld';
  /** The chat session doing the reading ("this session"), not necessarily the run's own session. */
  sessionId: string;
  runs: { runId: string; confidence: number }[];
  model: string;
}

export const WITHHELD_RUNS_MIGRATION = `
  CREATE TABLE withheld_runs (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    withheld_at INTEGER NOT NULL,
    confidence REAL NOT NULL,
    model TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id)
  );
`;

export function applyRunsWithheld(db: Database, op: Operation): void {
  const w = op as RunsWithheld;
  for (const r of w.runs) {
    // A race between two processes is settled in `decide`; OR IGNORE only keeps replay idempotent.
    db.run('INSERT OR IGNORE INTO withheld_runs(session_id, run_id, withheld_at, confidence, model) VALUES (?, ?, ?, ?, ?)', [w.sessionId, r.runId, w.at, r.confidence, w.model]);
  }
}

export function withheldIn(db: Database, sessionId: string, runIds: readonly string[]): Set<string> {
  if (!runIds.length) return new Set();
  const rows = queryRows(db, `SELECT run_id FROM withheld_runs WHERE session_id = ? AND run_id IN (${runIds.map(() => '?').join(',')})`, [sessionId, ...runIds]);
  return new Set(rows.map((r) => String(r.run_id)));
}

/**
 * Records the runs as withheld in the session and returns those this call recorded: a run
 * another process withheld meanwhile is left out, so the caller returns it in full instead.
 */
export function recordWithheld(store: Store, sessionId: string, runs: RunsWithheld['runs'], model: string): Promise<Set<string>> {
  return store.commit((db) => {
    const already = withheldIn(db, sessionId, runs.map((r) => r.runId));
    const fresh = runs.filter((r) => !already.has(r.runId));
    if (!fresh.length) return { result: new Set<string>() };
    const op: RunsWithheld = { op: 'history.runs.withheld', at: store.now, sessionId, runs: fresh, model };
    return { op, result: new Set(fresh.map((r) => r.runId)) };
  });
}
