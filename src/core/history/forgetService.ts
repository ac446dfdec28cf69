import * as path from 'node:path';
import type { ActivityLog } from '../activity/activityLog';
import { refuse, type Refusal } from '../refusal';
import type { PurgeResult } from '../store/journalPurge';
import type { Store } from '../store/store';
import { queryRows, type Database } from '../store/sqlite';
import { droppableOutputsWhere, type ForgetScope, type SessionsForgotten, type SessionsRemembered, type ToolOutputsDropped } from './forgetOps';
import { deleteUnreferencedBlobs } from './blobReferences';
import { retentionCuts, type ToolOutputRetention } from './retention';
import { dropOutputsRedactor, forgetSessionsRedactor } from './forgetRedact';

export interface ForgetReport {
  ok: true;
  sessions: { id: string; source: string; title: string | null; workspace: string | null }[];
  events: number;
  summaries: number;
  chapters: number;
  blobs_deleted: number;
  /** Rows of the activity log (Recollect's own calls) that named a forgotten session, its runs or its summaries. */
  activity_rows: number;
  /** Journal lines rewritten so the forgotten text is on disk nowhere: in sealed segments and in the live file. */
  journal: { segments_rewritten: number; segment_lines: number; live_lines: number };
  snapshot_rewritten: boolean;
  /** What could not be purged from disk, and why; empty when everything went. */
  warnings: string[];
}

export interface DropOutputsReport {
  ok: true;
  outputs: number;
  blobs_deleted: number;
  journal: ForgetReport['journal'];
  snapshot_rewritten: boolean;
  warnings: string[];
}

/**
 * Forgetting, a person's act (a command or the CLI; no tool offers it to a model): whole imported
 * sessions go from every table, index, summary and chapter in every process (a journal
 * operation), then from disk — blobs no remaining row names, the snapshot (rewritten at once),
 * and the journal's earlier lines and sealed segments (rewritten in place). A tombstone keeps
 * a forgotten session from being imported again until a person asks (`remember`).
 */
export class ForgetService {
  constructor(
    private readonly store: Store,
    /** Recollect's log of its own calls, outside the store: its rows that name a forgotten session go too. */
    private readonly activity?: ActivityLog,
  ) {}

  async forget(scope: ForgetScope): Promise<ForgetReport | Refusal> {
    const decided = await this.store.commit((db) => {
      const sessions = matching(db, scope);
      if (!sessions.length) return { result: refuse(nothingMatches(scope)) };
      const ids = sessions.map((s) => s.id);
      const counts = countsOf(db, ids);
      const names = namesOf(db, sessions);
      const op: SessionsForgotten = { op: 'history.sessions.forgotten', at: this.store.now, sessions: sessions.map((s) => ({ id: s.id, file: s.file })), scope };
      // Where the forget line will start: commit caught up under the lock just before deciding.
      return { op, result: { sessions, ids, counts, names, upTo: this.store.version } };
    });
    if ('ok' in decided) return decided;
    const upTo = decided.upTo;
    const blobsDeleted = await this.deleteUnreferenced(decided.counts.blobs);
    const disk = await this.purgeDisk(forgetSessionsRedactor(new Set(decided.ids)), upTo);
    const activityRows = this.activity ? await this.activity.dropRowsNaming(decided.names) : 0;
    return {
      ok: true,
      sessions: decided.sessions.map(({ id, source, title, workspace }) => ({ id, source, title, workspace })),
      events: decided.counts.events,
      summaries: decided.counts.summaries,
      chapters: decided.counts.chapters,
      blobs_deleted: blobsDeleted,
      activity_rows: activityRows,
      ...disk,
    };
  }

  /** The sessions `forget(scope)` would forget now, for a confirmation that names them. */
  preview(scope: ForgetScope): { id: string; source: string; title: string | null; workspace: string | null }[] {
    return matching(this.store.db, scope).map(({ id, source, title, workspace }) => ({ id, source, title, workspace }));
  }

  /** Lifts the tombstones: the sessions' files are read again by the next import (or the watcher). */
  async remember(ids: readonly string[]): Promise<{ ok: true; remembered: string[] } | Refusal> {
    return this.store.commit((db) => {
      const known = ids.filter((id) => queryRows(db, 'SELECT 1 FROM forgotten_sessions WHERE session_id = ?', [id]).length > 0);
      if (!known.length) return { result: refuse(`no forgotten session has the id ${ids.join(', ')}; \`recollect forget --list\` names them`) };
      const op: SessionsRemembered = { op: 'history.sessions.remembered', at: this.store.now, ids: known };
      return { op, result: { ok: true as const, remembered: known } };
    });
  }

  /** The tombstones: which sessions stay out of the history, since when. */
  forgotten(): { id: string; file: string; forgotten_at: string }[] {
    return queryRows(this.store.db, 'SELECT session_id, file, forgotten_at FROM forgotten_sessions ORDER BY forgotten_at DESC').map((r) => ({
      id: String(r.session_id),
      file: String(r.file),
      forgotten_at: new Date(Number(r.forgotten_at)).toISOString(),
    }));
  }

  /**
   * Retention: raw tool outputs timed before `before` lose their text, inline and in blobs, of
   * the given sources (null: all); their events, hashes and summaries stay. Nothing to drop is
   * no operation at all, so running it on a timer costs one query when there is nothing to do.
   */
  async dropToolOutputs(before: number, sources: readonly string[] | null): Promise<DropOutputsReport> {
    const decided = await this.store.commit((db) => {
      const where = droppableOutputsWhere(sources);
      const params = sources ? [before, JSON.stringify(sources)] : [before];
      const rows = queryRows(db, `SELECT count(*) AS n FROM events WHERE ${where}`, params);
      const outputs = Number(rows[0]?.n ?? 0);
      if (!outputs) return { result: { outputs, blobs: [] as string[], upTo: 0 } };
      const blobs = queryRows(db, `SELECT DISTINCT blob FROM events WHERE blob IS NOT NULL AND ${where}`, params).map((r) => String(r.blob));
      const op: ToolOutputsDropped = { op: 'history.tool_outputs.dropped', at: this.store.now, before, sources: sources ? [...sources] : null };
      // Only the lines before this one are rewritten: a later line applies after the drop, and its text stays.
      return { op, result: { outputs, blobs, upTo: this.store.version } };
    });
    if (!decided.outputs) return { ok: true, outputs: 0, blobs_deleted: 0, journal: { segments_rewritten: 0, segment_lines: 0, live_lines: 0 }, snapshot_rewritten: false, warnings: [] };
    const blobsDeleted = await this.deleteUnreferenced(decided.blobs);
    return { ok: true, outputs: decided.outputs, blobs_deleted: blobsDeleted, ...(await this.purgeDisk(dropOutputsRedactor(before, sources), decided.upTo)) };
  }

  /** Applies a retention setting (see retention.ts): one drop per distinct number of days; only the drops that found something are reported. */
  async applyRetention(setting: ToolOutputRetention): Promise<DropOutputsReport[]> {
    const reports: DropOutputsReport[] = [];
    for (const cut of retentionCuts(setting, this.store.now)) {
      const r = await this.dropToolOutputs(cut.before, cut.sources);
      if (r.outputs) reports.push(r);
    }
    return reports;
  }

  private deleteUnreferenced(hashes: readonly string[]): Promise<number> {
    return deleteUnreferencedBlobs(this.store, hashes);
  }

  /** The snapshot first (so it no longer holds the text and covers the operation), then the journal before the operation. */
  private async purgeDisk(redact: Parameters<Store['purgeJournal']>[0], upTo: number): Promise<Pick<ForgetReport, 'journal' | 'snapshot_rewritten' | 'warnings'>> {
    const warnings: string[] = [];
    let snapshot = false;
    if (this.store.canCheckpoint) {
      try {
        this.store.checkpoint();
        snapshot = true;
      } catch (err) {
        // The forget itself is journaled and applied everywhere; only the old snapshot file still holds the text.
        warnings.push(`the snapshot was not rewritten (${(err as Error).message}); the next checkpoint writes it without the forgotten text`);
      }
    } else {
      warnings.push('the snapshot was not rewritten: this store holds journal lines of a newer Recollect build, so this one writes no checkpoint; the old snapshot still holds the forgotten text until a newer build checkpoints');
    }
    let purge: PurgeResult;
    try {
      purge = await this.store.purgeJournal(redact, upTo);
    } catch (err) {
      warnings.push(`the journal was not purged: ${(err as Error).message}`);
      return { journal: { segments_rewritten: 0, segment_lines: 0, live_lines: 0 }, snapshot_rewritten: snapshot, warnings };
    }
    warnings.push(...purge.unpurged);
    return { journal: { segments_rewritten: purge.segmentsRewritten, segment_lines: purge.segmentLines, live_lines: purge.liveLines }, snapshot_rewritten: snapshot, warnings };
  }
}

interface MatchedSession {
  id: string;
  source: string;
  title: string | null;
  workspace: string | null;
  file: string;
}

function matching(db: Database, scope: ForgetScope): MatchedSession[] {
  const rows = (where: string, params: (string | number)[]) =>
    queryRows(db, `SELECT id, source, title, workspace, file FROM sessions WHERE ${where} ORDER BY coalesce(updated_at, started_at)`, params).map((r) => ({
      id: String(r.id),
      source: String(r.source),
      title: r.title === null ? null : String(r.title),
      workspace: r.workspace === null ? null : String(r.workspace),
      file: String(r.file),
    }));
  if ('session' in scope) return rows('id = ?1 OR external_id = ?1', [scope.session]);
  if ('before' in scope) return rows('coalesce(updated_at, started_at) < ?', [scope.before]);
  const root = normalFolder(scope.workspace);
  return rows('workspace IS NOT NULL', []).filter((s) => {
    const w = normalFolder(s.workspace as string);
    return w === root || w.startsWith(root + '/');
  });
}

/** A folder as sessions record it (a path or a file: URI), compared without a trailing slash and with forward slashes. */
function normalFolder(p: string): string {
  let s = p.trim();
  if (s.startsWith('file://')) s = decodeURIComponent(s.slice('file://'.length));
  s = path.normalize(s).replace(/\\/g, '/');
  return s.length > 1 ? s.replace(/\/+$/, '') : s;
}

function nothingMatches(scope: ForgetScope): string {
  if ('session' in scope) return `no imported session has the id "${scope.session}" (a Recollect id ses_… or the source's own session id); nothing was forgotten`;
  if ('before' in scope) return `no imported session was last active before ${new Date(scope.before).toISOString()}; nothing was forgotten`;
  return `no imported session ran in ${scope.workspace} or a folder inside it; nothing was forgotten`;
}

/** The ids a tool's answer names a session by: its own, the source's, its runs' (task_id) and its summaries'. */
function namesOf(db: Database, sessions: readonly MatchedSession[]): string[] {
  const list = JSON.stringify(sessions.map((s) => s.id));
  const inList = 'IN (SELECT value FROM json_each(?1))';
  const more = queryRows(
    db,
    `SELECT external_id AS v FROM sessions WHERE id ${inList} UNION SELECT id FROM runs WHERE session_id ${inList} UNION SELECT id FROM lcm_summaries WHERE session_id ${inList}`,
    [list],
  ).map((r) => String(r.v));
  return [...sessions.map((s) => s.id), ...more];
}

function countsOf(db: Database, ids: readonly string[]): { events: number; summaries: number; chapters: number; blobs: string[] } {
  const list = JSON.stringify(ids);
  const n = (sql: string) => Number(queryRows(db, sql, [list])[0]?.n ?? 0);
  const inList = 'IN (SELECT value FROM json_each(?1))';
  const blobs = queryRows(
    db,
    `SELECT blob AS h FROM events WHERE session_id ${inList} AND blob IS NOT NULL
     UNION SELECT blob FROM lcm_files WHERE session_id ${inList}
     UNION SELECT sha256 FROM chapters WHERE session_id ${inList}
     UNION SELECT sha256 FROM chapter_plans WHERE session_id ${inList}
     UNION SELECT first_message_sha FROM child_sessions WHERE parent_session_id ${inList} AND first_message_sha IS NOT NULL`,
    [list],
  ).map((r) => String(r.h));
  return {
    events: n(`SELECT count(*) AS n FROM events WHERE session_id ${inList}`),
    summaries: n(`SELECT count(*) AS n FROM lcm_summaries WHERE session_id ${inList}`),
    chapters: n(`SELECT count(*) AS n FROM chapters WHERE session_id ${inList}`),
    blobs,
  };
}
