import { analyze } from '../../../src/core/text/analyzer';
import type { FileImported, FilesImported, SessionChange } from '../../../src/core/history/historySchema';
import type { Operation } from '../../../src/core/store/journal';
import type { Database, SqlValue, Statement } from '../../../src/core/store/sqlite';

/**
 * The history applier as it was before the import-speed work (one INSERT per event and per
 * index entry, last_insert_rowid(), one query per run), kept as the oracle that the faster
 * applier must match row for row: a journal either build wrote must replay to the same rows.
 * Only the history operations that write sessions and events are handled here. The layout is
 * today's (history_fts reads its stored columns from the events: src/core/history/historyIndex.ts),
 * so each event also keeps its index terms and fallback time, and its index entry is deleted
 * before its row changes.
 */
export function referenceApply(db: Database, op: Operation): boolean {
  if (op.op === 'history.file.imported' || op.op === 'history.files.imported') {
    // A batch is its files one after another, each as its own line would be, at the line's time.
    const files = op.op === 'history.file.imported' ? [op as FileImported] : (op as FilesImported).files;
    for (const f of files) {
      for (const change of f.sessions) applySessionChange(db, change, op.at);
      db.run(
        'INSERT INTO import_files(path, size, mtime_ms, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, seen_at = excluded.seen_at',
        [f.file.path, f.file.size, f.file.mtimeMs, op.at],
      );
    }
    return true;
  }
  return false;
}

function applySessionChange(db: Database, change: SessionChange, at: number): void {
  const { session: s, upserts, removedKeys, runIds } = change;
  db.run(
    `INSERT INTO sessions(id, source, external_id, file, title, workspace, model, started_at, updated_at, parent_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET file = excluded.file, title = coalesce(excluded.title, title),
       workspace = coalesce(excluded.workspace, workspace), model = coalesce(excluded.model, model),
       started_at = coalesce(min(started_at, excluded.started_at), started_at, excluded.started_at),
       updated_at = coalesce(max(updated_at, excluded.updated_at), updated_at, excluded.updated_at),
       parent_id = coalesce(excluded.parent_id, parent_id)`,
    [s.id, s.source, s.externalId, s.file, s.title, s.workspace, s.model, s.startedAt, s.updatedAt, s.parentId],
  );
  const st = new Statements(db);
  try {
    const touchedRuns = new Set<string>();
    const find = (key: string) => st.row('SELECT id, run_id FROM events WHERE session_id = ? AND key = ?', [s.id, key]);
    for (const key of removedKeys) {
      const row = find(key);
      if (!row) continue;
      touchedRuns.add(String(row.run_id));
      st.run('DELETE FROM history_fts WHERE docid = ?', [row.id ?? null]);
      st.run('DELETE FROM events WHERE id = ?', [row.id ?? null]);
    }
    for (const e of upserts) {
      const runId = runIds[e.runKey] as string;
      touchedRuns.add(runId);
      const existing = find(e.key);
      const indexed = e.text.trim() !== '';
      const terms = indexed ? analyze(e.toolName ? `${e.toolName} ${e.text}` : e.text) : null;
      const values: SqlValue[] = [
        runId, e.seq, e.kind, e.text, e.blob, e.bytes, e.hash, e.at, e.toolName, e.callId, e.toolInput, e.isError ? 1 : 0, e.parentKey, e.rawType, e.model,
        indexed && e.at === null ? (s.updatedAt ?? at) : null, terms,
      ];
      let id: number;
      if (existing) {
        id = Number(existing.id);
        touchedRuns.add(String(existing.run_id));
        st.run('DELETE FROM history_fts WHERE docid = ?', [id]);
        st.run(
          `UPDATE events SET run_id = ?, seq = ?, kind = ?, text = ?, blob = ?, bytes = ?, hash = ?, created_at = ?, tool_name = ?, call_id = ?,
             tool_input = ?, is_error = ?, parent_key = ?, raw_type = ?, model = ?, indexed_at = ?, terms = ? WHERE id = ?`,
          [...values, id],
        );
      } else {
        st.run(
          `INSERT INTO events(session_id, key, run_id, seq, kind, text, blob, bytes, hash, created_at, tool_name, call_id, tool_input, is_error, parent_key, raw_type, model, indexed_at, terms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [s.id, e.key, ...values],
        );
        id = Number(st.row('SELECT last_insert_rowid() AS id', [])?.id);
      }
      if (terms !== null) st.run('INSERT INTO history_fts(docid, terms) VALUES (?, ?)', [id, terms]);
    }
    for (const runId of touchedRuns) rebuildRun(st, s.id, runId);
  } finally {
    st.free();
  }
}

function rebuildRun(st: Statements, sessionId: string, runId: string): void {
  st.run('DELETE FROM runs WHERE id = ?', [runId]);
  const r = st.row(
    `SELECT min(seq) AS first_seq, min(created_at) AS started, max(created_at) AS ended, count(*) AS n, sum(bytes) AS chars,
       (SELECT text FROM events WHERE run_id = ?1 AND kind = 'user' ORDER BY seq LIMIT 1) AS objective,
       (SELECT key FROM events WHERE run_id = ?1 ORDER BY seq LIMIT 1) AS first_key
     FROM events WHERE run_id = ?1`,
    [runId],
  );
  if (!r || Number(r.n) === 0) return;
  const objective = r.objective;
  st.run('INSERT INTO runs(id, session_id, run_key, seq, objective, started_at, ended_at, event_count, chars) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    runId, sessionId, String(r.first_key ?? ''), Number(r.first_seq),
    typeof objective === 'string' ? objective.slice(0, 300) : null,
    r.started ?? null, r.ended ?? null, Number(r.n), Number(r.chars),
  ]);
}

class Statements {
  private readonly prepared = new Map<string, Statement>();

  constructor(private readonly db: Database) {}

  run(sql: string, params: SqlValue[]): void {
    this.get(sql).run(params);
  }

  row(sql: string, params: SqlValue[]): Record<string, SqlValue> | undefined {
    const stmt = this.get(sql);
    try {
      stmt.bind(params);
      return stmt.step() ? stmt.getAsObject() : undefined;
    } finally {
      stmt.reset();
    }
  }

  free(): void {
    for (const stmt of this.prepared.values()) stmt.free();
    this.prepared.clear();
  }

  private get(sql: string): Statement {
    let stmt = this.prepared.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.prepared.set(sql, stmt);
    }
    return stmt;
  }
}
