import { createFtsTableSql } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import { type Database, type SqlValue, type Statement } from '../store/sqlite';
import type { EventKind, HistorySource } from './parsedSession';
import { applyRunsWithheld, WITHHELD_RUNS_MIGRATION } from './withheldRuns';

export const HISTORY_FTS = 'history_fts';

/** One event as journaled: bounded text inline, the full text (when larger) in the blob store. */
export interface StoredEvent {
  key: string;
  seq: number;
  runKey: string;
  kind: EventKind;
  text: string;
  blob: string | null;
  bytes: number;
  hash: string;
  at: number | null;
  toolName: string | null;
  callId: string | null;
  toolInput: string | null;
  isError: boolean;
  parentKey: string | null;
  rawType: string | null;
  model: string | null;
}

export interface SessionHeader {
  id: string;
  source: HistorySource;
  externalId: string;
  file: string;
  title: string | null;
  workspace: string | null;
  model: string | null;
  startedAt: number | null;
  updatedAt: number | null;
  parentId: string | null;
}

/**
 * One imported session's changes: new or changed events (by key), and for snapshot formats the
 * keys that vanished from the file. Everything is decided by the importer, so replay is exact.
 */
export interface SessionImported extends Operation {
  op: 'history.session.imported';
  session: SessionHeader;
  upserts: StoredEvent[];
  removedKeys: string[];
  runIds: Record<string, string>;
}

/** A file looked at, so an unchanged file is skipped without parsing next time. */
export interface FileSeen extends Operation {
  op: 'history.file.seen';
  path: string;
  size: number;
  mtimeMs: number;
}

/** What one session of a file changed: the fields of `SessionImported` without the envelope. */
export type SessionChange = Pick<SessionImported, 'session' | 'upserts' | 'removedKeys' | 'runIds'>;

/**
 * One imported file in one journal line: its sessions' changes and the file's size and mtime.
 * It replaced a `history.session.imported` line per session plus a `history.file.seen` line
 * (one fsync per file instead of two); both old operations still replay.
 */
export interface FileImported extends Operation {
  op: 'history.file.imported';
  file: { path: string; size: number; mtimeMs: number };
  sessions: SessionChange[];
}

const MIGRATIONS = [
  `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    external_id TEXT NOT NULL,
    file TEXT NOT NULL,
    title TEXT,
    workspace TEXT,
    model TEXT,
    started_at INTEGER,
    updated_at INTEGER,
    parent_id TEXT,
    UNIQUE (source, external_id)
  );
  CREATE INDEX sessions_by_update ON sessions(updated_at);
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    run_key TEXT NOT NULL, -- the key of the run's first event
    seq INTEGER NOT NULL,  -- the seq of the run's first event: orders runs within their session
    objective TEXT,
    started_at INTEGER,
    ended_at INTEGER,
    event_count INTEGER NOT NULL,
    chars INTEGER NOT NULL
  );
  CREATE INDEX runs_by_time ON runs(ended_at);
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    blob TEXT,
    bytes INTEGER NOT NULL,
    hash TEXT NOT NULL,
    created_at INTEGER,
    tool_name TEXT,
    call_id TEXT,
    tool_input TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    parent_key TEXT,
    raw_type TEXT,
    model TEXT,
    UNIQUE (session_id, key)
  );
  CREATE INDEX events_by_run ON events(run_id, seq);
  CREATE INDEX events_by_session ON events(session_id, seq);
  CREATE TABLE import_files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ms INTEGER NOT NULL,
    seen_at INTEGER NOT NULL
  );
  ${createFtsTableSql(HISTORY_FTS, ['session_id', 'kind'])}
  `,
  WITHHELD_RUNS_MIGRATION,
];

function applySessionImported(db: Database, op: Operation): void {
  applySessionChange(db, op as SessionImported, op.at);
}

function applyFileImported(db: Database, op: Operation): void {
  const f = op as FileImported;
  for (const change of f.sessions) applySessionChange(db, change, f.at);
  recordFileSeen(db, f.file.path, f.file.size, f.file.mtimeMs, f.at);
}

/** `at`: the operation's time, the indexed time of an event that has none of its own. */
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
  // Compiling a statement costs more than running it, and one operation runs the same few per
  // event: each is prepared once here and freed before the applier returns, so none outlives it.
  const st = new Statements(db);
  try {
    // Only the runs this operation touches are recomputed, so appending to a long session stays cheap.
    const touchedRuns = new Set<string>();
    const find = (key: string) => st.row('SELECT id, run_id FROM events WHERE session_id = ? AND key = ?', [s.id, key]);
    for (const key of removedKeys) {
      const row = find(key);
      if (!row) continue;
      touchedRuns.add(String(row.run_id));
      st.run(`DELETE FROM ${HISTORY_FTS} WHERE docid = ?`, [row.id ?? null]);
      st.run('DELETE FROM events WHERE id = ?', [row.id ?? null]);
    }
    for (const e of upserts) {
      const runId = runIds[e.runKey] as string;
      touchedRuns.add(runId);
      const existing = find(e.key);
      const values: SqlValue[] = [
        runId, e.seq, e.kind, e.text, e.blob, e.bytes, e.hash, e.at, e.toolName, e.callId, e.toolInput, e.isError ? 1 : 0, e.parentKey, e.rawType, e.model,
      ];
      let id: number;
      if (existing) {
        id = Number(existing.id);
        touchedRuns.add(String(existing.run_id));
        st.run(
          `UPDATE events SET run_id = ?, seq = ?, kind = ?, text = ?, blob = ?, bytes = ?, hash = ?, created_at = ?, tool_name = ?, call_id = ?,
             tool_input = ?, is_error = ?, parent_key = ?, raw_type = ?, model = ? WHERE id = ?`,
          [...values, id],
        );
        st.run(`DELETE FROM ${HISTORY_FTS} WHERE docid = ?`, [id]);
      } else {
        st.run(
          `INSERT INTO events(session_id, key, run_id, seq, kind, text, blob, bytes, hash, created_at, tool_name, call_id, tool_input, is_error, parent_key, raw_type, model)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [s.id, e.key, ...values],
        );
        // Not INSERT … RETURNING: in sql.js it measured slower than this second (prepared) statement.
        id = Number(st.row('SELECT last_insert_rowid() AS id', [])?.id);
      }
      if (e.text.trim()) {
        const body = e.toolName ? `${e.toolName} ${e.text}` : e.text;
        st.run(`INSERT INTO ${HISTORY_FTS}(docid, body, created_at, scope, session_id, kind) VALUES (?, ?, ?, ?, ?, ?)`, [
          id, body, e.at ?? s.updatedAt ?? at, s.source, s.id, e.kind,
        ]);
      }
    }
    for (const runId of touchedRuns) rebuildRun(st, s.id, runId);
  } finally {
    st.free();
  }
}

/** A run is derived from its events (seq = its first event's seq), so moved or removed events keep it consistent. */
function rebuildRun(st: Statements, sessionId: string, runId: string): void {
  st.run('DELETE FROM runs WHERE id = ?', [runId]);
  // One pass: the aggregates, the first user message (the objective) and the first event's key.
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

/** Statements prepared on first use and kept until `free()`: for one applier call, never longer (sql.js export() frees them). */
class Statements {
  private readonly prepared = new Map<string, Statement>();

  constructor(private readonly db: Database) {}

  run(sql: string, params: SqlValue[]): void {
    this.get(sql).run(params);
  }

  /** The first row as an object (the statement is reset, ready for the next call), or undefined. */
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

function applyFileSeen(db: Database, op: Operation): void {
  const f = op as FileSeen;
  recordFileSeen(db, f.path, f.size, f.mtimeMs, f.at);
}

function recordFileSeen(db: Database, path: string, size: number, mtimeMs: number, at: number): void {
  db.run(
    'INSERT INTO import_files(path, size, mtime_ms, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, seen_at = excluded.seen_at',
    [path, size, mtimeMs, at],
  );
}

export const historyModule: StoreModule = {
  name: 'history',
  migrations: MIGRATIONS,
  appliers: {
    'history.session.imported': applySessionImported,
    'history.file.seen': applyFileSeen,
    'history.runs.withheld': applyRunsWithheld,
    'history.file.imported': applyFileImported,
  },
};
