import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Store } from '../store/store';
import { queryRows } from '../store/sqlite';
import type { Database, Statement } from '../store/sqlite';
import type { FileImported, FilesImported, SessionChange, SessionHeader, StoredEvent } from './historySchema';
import type { ParsedEvent, ParsedSession, ParseProblem } from './parsedSession';
import { detectTranscript, isSnapshotFormat } from './parsers/detect';
import { deleteUnreferencedBlobs } from './blobReferences';
import type { ExcludeGlobs } from './excludeGlobs';
import { isForgotten } from './forgetOps';
import { ImportPipeline, Landing } from './importPipeline';
import { Redaction } from '../privacy/redaction';
import { redactSessions } from './sessionRedaction';
import type { PendingSyncs } from './pendingSyncs';

/** Text kept inline (and indexed) per event; the whole text of anything longer goes to the blob store. */
export const INLINE_TEXT_MAX = 4000;
const PREAMBLE_RUN = '(before the first request)';

export interface ImportReport {
  files: number;
  unchanged_files: number;
  ignored_files: number;
  /** Files and folders left out by `recollect.history.exclude` (a folder counts once). */
  excluded: number;
  sessions: number;
  runs: number;
  events: number;
  skipped_lines: number;
  /** Sessions in the files read that a person forgot: not imported again (see ForgetService.remember). */
  forgotten_sessions: number;
  unknown_types: Record<string, number>;
  problems: ParseProblem[];
}

/** Runs after the events are journaled, outside the store lock; it handles its own failures (an import never fails for it). */
export type SessionImportListener = (sessionId: string, events: readonly StoredEvent[]) => Promise<void>;

export function emptyReport(): ImportReport {
  return { files: 0, unchanged_files: 0, ignored_files: 0, excluded: 0, sessions: 0, runs: 0, events: 0, skipped_lines: 0, forgotten_sessions: 0, unknown_types: {}, problems: [] };
}

export function sessionIdOf(source: string, externalId: string): string {
  return 'ses_' + sha(`${source}\0${externalId}`).slice(0, 16);
}

export function runIdOf(sessionId: string, runKey: string): string {
  return 't' + sha(`${sessionId}\0${runKey}`).slice(0, 10);
}

/**
 * Imports transcript files into the history, incrementally and idempotently: an unchanged
 * file is skipped by size and mtime; otherwise only events that are new or whose content
 * changed are journaled, and for snapshot formats the events that vanished are removed.
 */
export class HistoryImporter {
  private readonly listeners: SessionImportListener[] = [];

  constructor(
    private readonly store: Store,
    private readonly redaction: Redaction = new Redaction(),
  ) {}

  /** Lets another aggregate react to a session's newly journaled events (chapters links a chat that opened with a child's marker). */
  onSessionImported(listener: SessionImportListener): void {
    this.listeners.push(listener);
  }

  /** Resolves once every file's changes are on disk. `exclude`: files and folders never read (the setting recollect.history.exclude). */
  async importPaths(paths: readonly string[], report = emptyReport(), exclude?: ExcludeGlobs): Promise<ImportReport> {
    const pipeline: ImportPipeline<ReadFile> = new ImportPipeline((batch) => this.commitFiles(batch, report, pipeline.syncs));
    const seen = new Set<string>();
    const excluded = (p: string) => {
      const out = !!exclude && exclude.excludes(path.resolve(p));
      if (out) report.excluded++;
      return out;
    };
    for (const p of paths) {
      const stat = statOrUndefined(p);
      if (!stat) {
        report.problems.push({ file: p, reason: 'no such file or folder' });
        continue;
      }
      if (excluded(p)) continue;
      if (stat.isDirectory()) {
        for (const file of walkTranscriptFiles(p, excluded)) await pipeline.add(await this.readFile(file, report, false, seen));
      } else {
        await pipeline.add(await this.readFile(p, report, true, seen));
      }
    }
    await pipeline.finish();
    return report;
  }

  /** `named`: the person pointed at this file, so a file we cannot read as a transcript is a problem, not noise. Resolves once its changes are on disk. */
  async importFile(file: string, report: ImportReport, named = true): Promise<void> {
    const pipeline: ImportPipeline<ReadFile> = new ImportPipeline((batch) => this.commitFiles(batch, report, pipeline.syncs));
    await pipeline.add(await this.readFile(file, report, named, new Set()));
    await pipeline.finish();
  }

  /**
   * Reads, parses, redacts and prepares one file, its large texts set writing to the blob store in
   * the background; undefined when there is nothing to commit (unchanged, not a transcript). `seen`:
   * the files read earlier in this call, which count as unchanged when named again, since their
   * commit may not have run yet.
   */
  private async readFile(file: string, report: ImportReport, named: boolean, seen: Set<string>): Promise<ReadFile | undefined> {
    const abs = path.resolve(file);
    const stat = fs.statSync(abs);
    const known = queryRows(this.store.db, 'SELECT size, mtime_ms FROM import_files WHERE path = ?', [abs])[0];
    if (seen.has(abs) || (known && Number(known.size) === stat.size && Number(known.mtime_ms) === Math.floor(stat.mtimeMs))) {
      report.files++;
      report.unchanged_files++;
      return undefined;
    }
    const text = fs.readFileSync(abs, 'utf8');
    const detected = detectTranscript(abs, text);
    if (!detected) {
      if (named) report.problems.push({ file: abs, reason: 'not a transcript format Recollect knows' });
      else report.ignored_files++;
      return undefined;
    }
    seen.add(abs);
    report.files++;
    const parsed = detected.parser(abs, text);
    report.skipped_lines += parsed.problems.filter((p) => p.line !== undefined).length;
    report.problems.push(...parsed.problems);
    for (const [type, n] of Object.entries(parsed.unknownTypes)) report.unknown_types[type] = (report.unknown_types[type] ?? 0) + n;
    const blobs: Promise<void>[] = [];
    const putBlob = (full: string) => {
      const pending = this.store.blobs.putInBackground(full);
      blobs.push(pending.durable);
      return pending.hash;
    };
    // A forgotten session's large texts must not come back as blobs either, so it is left out before anything is written.
    const db = this.store.db;
    const kept = parsed.sessions.filter((s) => !isForgotten(db, sessionIdOf(s.source, s.externalId)));
    report.forgotten_sessions += parsed.sessions.length - kept.length;
    // Before anything is prepared: the secret must reach neither a blob, nor the journal, nor the index.
    const redacted = await redactSessions(kept, this.redaction);
    const sessions = redacted.map((session) => this.prepareSession(abs, session, putBlob));
    return {
      sessions,
      sessionIds: sessions.map((p) => p.header.id),
      snapshot: isSnapshotFormat(detected.format),
      seen: { path: abs, size: stat.size, mtimeMs: Math.floor(stat.mtimeMs) },
      bytes: stat.size,
      blobs: new Landing(blobs),
    };
  }

  /**
   * Journals a batch of read files as one line (their sessions and that each was seen), once
   * their blobs are on disk, since the line names them; the line's fsync is left running in
   * `syncs`, so the next files are read and parsed while the disk catches up.
   */
  private async commitFiles(batch: readonly ReadFile[], report: ImportReport, syncs: PendingSyncs): Promise<void> {
    for (const f of batch) await f.blobs.landed();
    const { result: outcome, synced } = await this.store.commitSyncingInBackground((db) => {
      const existing = new ExistingKeys(db);
      let diffs: Diff[][];
      try {
        // A session forgotten by another process since the file was read is left out here, on the latest state.
        diffs = batch.map((f) => f.sessions.map((prepared) => (isForgotten(db, prepared.header.id) ? FORGOTTEN : diffSession(existing.of(prepared.header.id), prepared, f.snapshot))));
      } finally {
        existing.free();
      }
      const files = batch.map((f, i) => ({ file: f.seen, sessions: (diffs[i] ?? []).flatMap((d) => (d.change ? [d.change] : [])) }));
      const at = this.store.now;
      const only = files.length === 1 ? files[0] : undefined;
      const op: FileImported | FilesImported = only ? { op: 'history.file.imported', at, ...only } : { op: 'history.files.imported', at, files };
      return { op, result: diffs.flat() };
    });
    await syncs.add(synced);
    // Blobs written for a session forgotten meanwhile (by another process, after this file was read) are not left behind.
    const orphans = batch.flatMap((f, i) => f.sessions.filter((_, j) => outcome[offsetOf(batch, i) + j] === FORGOTTEN).flatMap((p) => p.events.flatMap((e) => (e.blob ? [e.blob] : []))));
    if (orphans.length) await deleteUnreferencedBlobs(this.store, orphans);
    for (const diff of outcome) {
      if (diff === FORGOTTEN) {
        report.forgotten_sessions++;
        continue;
      }
      report.sessions++;
      report.runs += diff.runs;
      report.events += diff.events;
      if (diff.change) await this.notify(diff.change);
    }
  }

  private async notify(change: SessionChange): Promise<void> {
    if (!change.upserts.length) return;
    for (const listener of this.listeners) await listener(change.session.id, change.upserts);
  }

  /** Everything about a session that does not depend on the store: header, events (large texts put in the blob store), run ids. */
  private prepareSession(file: string, session: ParsedSession, putBlob: (full: string) => string): PreparedSession {
    const sessionId = sessionIdOf(session.source, session.externalId);
    const events = uniqueKeys(session.events).map((e, i) => this.prepare(e, i + 1, putBlob));
    const runIds: Record<string, string> = {};
    for (const e of events) runIds[e.runKey] ??= runIdOf(sessionId, e.runKey);
    const times = events.map((e) => e.at).filter((t): t is number => t !== null);
    const header: SessionHeader = {
      id: sessionId,
      source: session.source,
      externalId: session.externalId,
      file,
      title: session.title ?? null,
      workspace: session.workspace ?? null,
      model: session.model ?? null,
      startedAt: session.startedAt ?? (times.length ? Math.min(...times) : null),
      updatedAt: session.updatedAt ?? (times.length ? Math.max(...times) : null),
      parentId: session.parentExternalId ? sessionIdOf(session.source, session.parentExternalId) : null,
    };
    return { header, events, runIds };
  }

  private prepare(e: ParsedEvent, seq: number, putBlob: (full: string) => string): StoredEvent {
    const full = e.text ?? '';
    const large = full.length > INLINE_TEXT_MAX;
    const toolInput = e.toolInput === undefined ? null : JSON.stringify(e.toolInput);
    const runKey = e.runKey ?? PREAMBLE_RUN;
    return {
      key: e.key,
      seq,
      runKey,
      kind: e.kind,
      text: large ? full.slice(0, INLINE_TEXT_MAX) : full,
      blob: large ? putBlob(full) : null,
      bytes: Buffer.byteLength(full, 'utf8'),
      hash: sha(JSON.stringify([e.kind, full, e.toolName, toolInput, e.isError, runKey, e.parentKey, e.at, e.callId, e.rawType, e.model, seq])).slice(0, 16),
      at: e.at ?? null,
      toolName: e.toolName ?? null,
      callId: e.callId ?? null,
      toolInput,
      isError: e.isError === true,
      parentKey: e.parentKey ?? null,
      rawType: e.rawType ?? null,
      model: e.model ?? null,
    };
  }
}

interface PreparedSession {
  header: SessionHeader;
  events: StoredEvent[];
  runIds: Record<string, string>;
}

/** A file read and prepared, waiting for its blobs to land before it is journaled. */
interface ReadFile {
  sessions: PreparedSession[];
  sessionIds: string[];
  snapshot: boolean;
  seen: FileImported['file'];
  bytes: number;
  blobs: Landing;
}

type Diff = { runs: number; events: number; change?: SessionChange };

/** Where file `i`'s sessions start in the batch's flat list of diffs. */
function offsetOf(batch: readonly ReadFile[], i: number): number {
  return batch.slice(0, i).reduce((n, f) => n + f.sessions.length, 0);
}

/** The diff of a session a person forgot: nothing is written. */
const FORGOTTEN: Diff = { runs: 0, events: 0 };

/**
 * Compares a prepared session with the keys and hashes the store holds for it (read inside the
 * commit, so on the latest state): only new or changed events are written, and for snapshot
 * formats vanished keys are removed. No change when the session is known and nothing differs.
 */
function diffSession(existing: ReadonlyMap<string, string>, p: PreparedSession, snapshot: boolean): Diff {
  const upserts = p.events.filter((e) => existing.get(e.key) !== e.hash);
  const present = new Set(p.events.map((e) => e.key));
  const removedKeys = snapshot ? [...existing.keys()].filter((k) => !present.has(k)) : [];
  const known = existing.size > 0;
  const counts = { runs: Object.keys(p.runIds).length, events: upserts.length };
  if (known && !upserts.length && !removedKeys.length) return counts;
  return { ...counts, change: { session: p.header, upserts, removedKeys, runIds: p.runIds } };
}

const EXISTING_KEYS = 'SELECT key, hash FROM events WHERE session_id = ?';

/** The stored keys and hashes of one session after another, through one statement compiled once per batch (freed by `free`, within the commit). */
class ExistingKeys {
  private stmt: Statement | undefined;

  constructor(private readonly db: Database) {}

  of(sessionId: string): Map<string, string> {
    const stmt = (this.stmt ??= this.db.prepare(EXISTING_KEYS));
    const keys = new Map<string, string>();
    try {
      stmt.bind([sessionId]);
      while (stmt.step()) {
        const [key, hash] = stmt.get();
        keys.set(String(key), String(hash));
      }
    } finally {
      stmt.reset();
    }
    return keys;
  }

  free(): void {
    this.stmt?.free();
    this.stmt = undefined;
  }
}

/** Transcript files under a folder: .json and .jsonl, skipping dependency and VCS folders and whatever `skip` names (a skipped folder is not entered). */
export function* walkTranscriptFiles(root: string, skip: (file: string) => boolean = () => false): Generator<string> {
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop() as string;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== '.git' && !skip(full)) stack.push(full);
      } else if (entry.isFile() && /\.jsonl?$/.test(entry.name) && !skip(full)) {
        yield full;
      }
    }
  }
}

/** A source that repeats an id would otherwise make every re-import look like a change. */
export function uniqueKeys(events: readonly ParsedEvent[]): ParsedEvent[] {
  const seen = new Map<string, number>();
  return events.map((e) => {
    const n = (seen.get(e.key) ?? 0) + 1;
    seen.set(e.key, n);
    return n === 1 ? e : { ...e, key: `${e.key}#${n}` };
  });
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
