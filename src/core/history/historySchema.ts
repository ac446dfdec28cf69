import { createFtsTableSql } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import type { Database } from '../store/sqlite';
import type { EventKind, HistorySource } from './parsedSession';
import { applySessionChange, applyWith, withWrites } from './sessionApply';
import { EXTERNAL_CONTENT_MIGRATION, HISTORY_FTS } from './historyIndex';
import { applySessionsForgotten, applySessionsRemembered, applyToolOutputsDropped, FORGOTTEN_MIGRATION } from './forgetOps';
import { applyRunsWithheld, WITHHELD_RUNS_MIGRATION } from './withheldRuns';

export { HISTORY_FTS };

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
export interface SessionChange {
  session: SessionHeader;
  upserts: StoredEvent[];
  removedKeys: string[];
  runIds: Record<string, string>;
}

/**
 * One imported file in one journal line: its sessions' changes and the file's size and mtime
 * (recorded so an unchanged file is skipped without parsing next time).
 */
export interface FileImported extends Operation {
  op: 'history.file.imported';
  file: { path: string; size: number; mtimeMs: number };
  sessions: SessionChange[];
}

/**
 * Several imported files in one journal line: each as `history.file.imported` would hold it, in
 * order, at the line's time. An import of many small files writes these, so the fixed cost of a
 * line, a lock hold and an applier call is paid once per batch instead of once per file.
 */
export interface FilesImported extends Operation {
  op: 'history.files.imported';
  files: Pick<FileImported, 'file' | 'sessions'>[];
}

/**
 * The events semantic recall embeds (semanticCorpora.ts): what people and agents said. The
 * index of them is a migration, so this text must not change: a query with other terms would
 * no longer be answered from the index (SQLite uses a partial index only for a WHERE that holds
 * its own terms), and would read every event again.
 */
export const EMBEDDABLE_EVENTS = "kind IN ('user', 'assistant') AND trim(text) <> ''";
/** Their ids and hashes: counting and listing them reads this index, never the events' texts. */
const EMBEDDABLE_EVENTS_MIGRATION = `CREATE INDEX events_embeddable ON events(id, hash) WHERE ${EMBEDDABLE_EVENTS};`;

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
  FORGOTTEN_MIGRATION,
  EXTERNAL_CONTENT_MIGRATION,
  // Counting and listing what semantic recall embeds read every event's text: seconds on a large store.
  EMBEDDABLE_EVENTS_MIGRATION,
];

function applyFileImported(db: Database, op: Operation): void {
  const f = op as FileImported;
  for (const change of f.sessions) applySessionChange(db, change, f.at);
  recordFileSeen(db, f.file.path, f.file.size, f.file.mtimeMs, f.at);
}

function applyFilesImported(db: Database, op: Operation): void {
  const f = op as FilesImported;
  // One set of statements for the whole batch: this is what batching saves.
  withWrites(db, (w) => {
    for (const file of f.files) {
      for (const change of file.sessions) applyWith(w, change, f.at);
      w.st.run(RECORD_FILE_SEEN, [file.file.path, file.file.size, file.file.mtimeMs, f.at]);
    }
  });
}

const RECORD_FILE_SEEN =
  'INSERT INTO import_files(path, size, mtime_ms, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, seen_at = excluded.seen_at';

function recordFileSeen(db: Database, path: string, size: number, mtimeMs: number, at: number): void {
  db.run(RECORD_FILE_SEEN, [path, size, mtimeMs, at]);
}

export const historyModule: StoreModule = {
  name: 'history',
  migrations: MIGRATIONS,
  appliers: {
    'history.runs.withheld': applyRunsWithheld,
    'history.file.imported': applyFileImported,
    'history.files.imported': applyFilesImported,
    'history.sessions.forgotten': applySessionsForgotten,
    'history.sessions.remembered': applySessionsRemembered,
    'history.tool_outputs.dropped': applyToolOutputsDropped,
  },
};
