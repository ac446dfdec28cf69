import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { INLINE_TEXT_MAX, runIdOf, sessionIdOf, uniqueKeys, walkTranscriptFiles } from '../src/core/history/importer';
import type { ParsedEvent } from '../src/core/history/parsedSession';
import { detectTranscript } from '../src/core/history/parsers/detect';
import { copyFolders } from './importChild';
import { kernelPeakRss, MemorySampler } from './memorySampler';
import { nowMs, progress } from './stats';

/**
 * Section 4's baseline, in its own process (`--child native-import <db> <root>`): the same
 * files, read in the same order and parsed by the same parsers, and the same events (same
 * columns, same ids and hashes) inserted into one native SQLite file through better-sqlite3,
 * with an FTS5 index on the same text, one transaction per file. WAL with synchronous=FULL,
 * so each file's transaction is durable when it commits, as each of our journal lines is.
 * What it does not do: a journal that can rebuild everything, a blob store, cross-process
 * catch-up. The full text of a large event stays in its row instead of a blob file.
 */

export interface NativeFigures {
  wallMs: number;
  parseMs: number;
  prepareMs: number;
  sqlMs: number;
  closeMs: number;
  files: number;
  sessions: number;
  events: number;
  dbBytes: number;
  peakRss: number;
  kernelPeakRss: number | null;
}

const SCHEMA = `
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = FULL;
  CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, external_id TEXT NOT NULL, file TEXT NOT NULL, title TEXT, workspace TEXT,
    model TEXT, started_at INTEGER, updated_at INTEGER, parent_id TEXT, UNIQUE (source, external_id));
  CREATE INDEX sessions_by_update ON sessions(updated_at);
  CREATE TABLE runs (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, run_key TEXT NOT NULL, seq INTEGER NOT NULL, objective TEXT,
    started_at INTEGER, ended_at INTEGER, event_count INTEGER NOT NULL, chars INTEGER NOT NULL);
  CREATE INDEX runs_by_time ON runs(ended_at);
  CREATE TABLE events (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, run_id TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL, blob TEXT, bytes INTEGER NOT NULL, hash TEXT NOT NULL, created_at INTEGER, tool_name TEXT,
    call_id TEXT, tool_input TEXT, is_error INTEGER NOT NULL DEFAULT 0, parent_key TEXT, raw_type TEXT, model TEXT, UNIQUE (session_id, key));
  CREATE INDEX events_by_run ON events(run_id, seq);
  CREATE INDEX events_by_session ON events(session_id, seq);
  CREATE TABLE import_files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ms INTEGER NOT NULL, seen_at INTEGER NOT NULL);
  CREATE VIRTUAL TABLE events_fts USING fts5(body, created_at UNINDEXED, scope UNINDEXED, session_id UNINDEXED, kind UNINDEXED,
    tokenize = "unicode61 remove_diacritics 2");
`;

export function nativeImportChild(dbFile: string, root: string): NativeFigures {
  const mem = new MemorySampler().start();
  const db = new BetterSqlite3(dbFile);
  db.exec(SCHEMA);
  const st = {
    session: db.prepare(`INSERT INTO sessions(id, source, external_id, file, title, workspace, model, started_at, updated_at, parent_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET file = excluded.file, title = coalesce(excluded.title, title),
      workspace = coalesce(excluded.workspace, workspace), model = coalesce(excluded.model, model),
      started_at = coalesce(min(started_at, excluded.started_at), started_at, excluded.started_at),
      updated_at = coalesce(max(updated_at, excluded.updated_at), updated_at, excluded.updated_at), parent_id = coalesce(excluded.parent_id, parent_id)`),
    existing: db.prepare('SELECT key, hash, id FROM events WHERE session_id = ?'),
    insert: db.prepare(`INSERT INTO events(session_id, key, run_id, seq, kind, text, blob, bytes, hash, created_at, tool_name, call_id, tool_input, is_error, parent_key, raw_type, model)
      VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    update: db.prepare(`UPDATE events SET run_id = ?, seq = ?, kind = ?, text = ?, bytes = ?, hash = ?, created_at = ?, tool_name = ?, call_id = ?,
      tool_input = ?, is_error = ?, parent_key = ?, raw_type = ?, model = ? WHERE id = ?`),
    ftsDelete: db.prepare('DELETE FROM events_fts WHERE rowid = ?'),
    fts: db.prepare('INSERT INTO events_fts(rowid, body, created_at, scope, session_id, kind) VALUES (?, ?, ?, ?, ?, ?)'),
    runDelete: db.prepare('DELETE FROM runs WHERE id = ?'),
    run: db.prepare(`INSERT INTO runs(id, session_id, run_key, seq, objective, started_at, ended_at, event_count, chars)
      SELECT @run, @session, (SELECT key FROM events WHERE run_id = @run ORDER BY seq LIMIT 1), min(seq),
        (SELECT substr(text, 1, 300) FROM events WHERE run_id = @run AND kind = 'user' ORDER BY seq LIMIT 1),
        min(created_at), max(created_at), count(*), sum(bytes) FROM events WHERE run_id = @run HAVING count(*) > 0`),
    file: db.prepare('INSERT INTO import_files(path, size, mtime_ms, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, seen_at = excluded.seen_at'),
  };
  const out: NativeFigures = { wallMs: 0, parseMs: 0, prepareMs: 0, sqlMs: 0, closeMs: 0, files: 0, sessions: 0, events: 0, dbBytes: 0, peakRss: 0, kernelPeakRss: null };
  const dirs = copyFolders(root);
  const t0 = nowMs();
  for (const [i, dir] of dirs.entries()) {
    for (const file of walkTranscriptFiles(dir)) {
      let t = nowMs();
      const stat = fs.statSync(file);
      const text = fs.readFileSync(file, 'utf8');
      const detected = detectTranscript(file, text);
      if (!detected) continue;
      const parsed = detected.parser(file, text);
      out.parseMs += nowMs() - t;
      t = nowMs();
      const sessions = parsed.sessions.map((session) => {
        const id = sessionIdOf(session.source, session.externalId);
        const events = uniqueKeys(session.events).map((e, k) => prepare(e, k + 1));
        const times = events.map((e) => e.at).filter((x): x is number => x !== null);
        return { session, id, events, times, runIds: new Map(events.map((e) => [e.runKey, runIdOf(id, e.runKey)])) };
      });
      out.prepareMs += nowMs() - t;
      t = nowMs();
      db.transaction(() => {
        for (const { session: ps, id, events, times, runIds } of sessions) {
          st.session.run(id, ps.source, ps.externalId, file, ps.title ?? null, ps.workspace ?? null, ps.model ?? null,
            ps.startedAt ?? (times.length ? Math.min(...times) : null), ps.updatedAt ?? (times.length ? Math.max(...times) : null),
            ps.parentExternalId ? sessionIdOf(ps.source, ps.parentExternalId) : null);
          const existing = new Map((st.existing.all(id) as { key: string; hash: string; id: number }[]).map((r) => [r.key, r]));
          const touched = new Set<string>();
          for (const e of events) {
            const old = existing.get(e.key);
            if (old?.hash === e.hash) continue;
            const runId = runIds.get(e.runKey) as string;
            touched.add(runId);
            const values = [runId, e.seq, e.kind, e.full, e.bytes, e.hash, e.at, e.toolName, e.callId, e.toolInput, e.isError ? 1 : 0, e.parentKey, e.rawType, e.model];
            let rowid: number;
            if (old) {
              st.update.run(...values, old.id);
              st.ftsDelete.run(old.id);
              rowid = old.id;
            } else {
              rowid = Number(st.insert.run(id, e.key, ...values).lastInsertRowid);
            }
            const inline = e.full.length > INLINE_TEXT_MAX ? e.full.slice(0, INLINE_TEXT_MAX) : e.full;
            if (inline.trim()) st.fts.run(rowid, e.toolName ? `${e.toolName} ${inline}` : inline, e.at ?? ps.updatedAt ?? Date.now(), ps.source, id, e.kind);
            out.events++;
          }
          for (const runId of touched) {
            st.runDelete.run(runId);
            st.run.run({ run: runId, session: id });
          }
          out.sessions++;
        }
        st.file.run(file, stat.size, Math.floor(stat.mtimeMs), Date.now());
      })();
      out.sqlMs += nowMs() - t;
      out.files++;
    }
    mem.sample();
    if ((i + 1) % Math.max(1, Math.round(dirs.length / 5)) === 0) progress(`  native import: ${i + 1}/${dirs.length} copies, ${out.events.toLocaleString('en-US')} events`);
  }
  out.wallMs = nowMs() - t0;
  const tc = nowMs();
  db.close(); // checkpoints the WAL into the database file
  out.closeMs = nowMs() - tc;
  mem.stop();
  out.dbBytes = fs.statSync(dbFile).size + sizeOr0(`${dbFile}-wal`);
  out.peakRss = mem.peakRss;
  out.kernelPeakRss = kernelPeakRss() ?? null;
  return out;
}

/** The importer's per-event preparation (importer.ts `prepare`), minus the blob file: the same key, hash and columns. */
function prepare(e: ParsedEvent, seq: number) {
  const full = e.text ?? '';
  const toolInput = e.toolInput === undefined ? null : JSON.stringify(e.toolInput);
  const runKey = e.runKey ?? '(before the first request)';
  return {
    key: e.key, seq, runKey, kind: e.kind, full,
    bytes: Buffer.byteLength(full, 'utf8'),
    hash: createHash('sha256').update(JSON.stringify([e.kind, full, e.toolName, toolInput, e.isError, runKey, e.parentKey, e.at, e.callId, e.rawType, e.model, seq])).digest('hex').slice(0, 16),
    at: e.at ?? null, toolName: e.toolName ?? null, callId: e.callId ?? null, toolInput, isError: e.isError === true,
    parentKey: e.parentKey ?? null, rawType: e.rawType ?? null, model: e.model ?? null,
  };
}

function sizeOr0(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
