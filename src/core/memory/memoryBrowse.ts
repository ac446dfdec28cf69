import { requestOverview, type RequestOverview } from '../requests/requestBrowse';
import type { Store } from '../store/store';
import { queryRows, queryScalar, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import { entities, retired } from './recall/memoryMap';

export interface BrowseFact {
  kind: 'fact';
  id: string;
  subject: string;
  predicate: string;
  object: string;
  text: string;
  scope: string;
  created_at: string;
}

export interface BrowseNote {
  kind: 'note';
  id: string;
  text: string;
  scope: string;
  created_at: string;
}

export type BrowseItem = BrowseFact | BrowseNote;

/** One remember_note entry in its day log. */
export interface LogEntry {
  id: string;
  day: string;
  text: string;
  scope: string;
  source: string;
  created_at: string;
  /** The day log's path in the vault. */
  path: string;
}

/** A Markdown note in the vault (day logs excepted: their entries are the daily log). */
export interface VaultNote {
  id: string;
  path: string;
  kind: string;
  title: string;
  scope: string;
  at: string;
}

export interface EntitySummary {
  name: string;
  facts: number;
  current_facts: number;
  last_recorded_at: string;
}

export interface RetiredSummary {
  id: string;
  kind: string;
  scope: string;
  retired_at: string;
  label: string;
}

/** Enough for a sidebar; a larger page would be a search, not a glance. */
export const RECENT_MAX = 200;

/**
 * Read-only views over facts and notes that people browse but no tool exposes: the newest
 * entries, and fact lookups by the `fact:<id>` references that search hits carry. Writes
 * stay in MemoryService, so the write rules live in one place.
 */
export class MemoryBrowse {
  constructor(private readonly store: Store) {}

  /** Newest current facts and note entries, interleaved by time. Superseded values are history, not news. */
  recent(limit: number): BrowseItem[] {
    const n = Math.max(1, Math.min(RECENT_MAX, Math.floor(limit)));
    const rows = queryRows(
      this.store.db,
      `SELECT kind, id, subject, predicate, object, text, scope, at FROM (
         SELECT 'fact' AS kind, id, subject, predicate, object, subject || ' ' || predicate || ' ' || object AS text, scope, recorded_at AS at
           FROM facts WHERE superseded_at IS NULL AND retired_at IS NULL
         UNION ALL
         SELECT 'note', id, NULL, NULL, NULL, text, scope, created_at FROM notes WHERE retired_at IS NULL
       ) ORDER BY at DESC, id DESC LIMIT ?`,
      [n],
    );
    return rows.map(toItem);
  }

  /** The facts behind `fact:<id>` references, keyed by reference; unknown ones are absent. A plain object, so it crosses to a client as JSON. */
  factsByRef(refs: readonly string[]): Record<string, BrowseFact> {
    const ids = refs.filter((r) => r.startsWith('fact:')).map((r) => r.slice('fact:'.length));
    if (!ids.length) return {};
    const rows = queryRows(
      this.store.db,
      `SELECT 'fact' AS kind, id, subject, predicate, object, subject || ' ' || predicate || ' ' || object AS text, scope, recorded_at AS at
         FROM facts WHERE id IN (${ids.map(() => '?').join(',')})`,
      ids,
    );
    const out: Record<string, BrowseFact> = {};
    for (const row of rows) {
      const item = toItem(row);
      if (item.kind === 'fact') out[item.id] = item;
    }
    return out;
  }

  /** The newest daily-log entries (remember_note), newest first, with the total. */
  dailyLog(limit: number): { items: LogEntry[]; total: number } {
    const rows = queryRows(
      this.store.db,
      'SELECT id, day, text, scope, source, created_at, path FROM notes WHERE retired_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?',
      [clamp(limit)],
    );
    const items = rows.map((r) => ({ id: String(r.id), day: String(r.day), text: String(r.text), scope: String(r.scope), source: String(r.source), created_at: iso(Number(r.created_at)), path: String(r.path) }));
    return { items, total: Number(queryScalar(this.store.db, 'SELECT count(*) FROM notes WHERE retired_at IS NULL') ?? 0) };
  }

  /** One daily-log entry by id, retired or not: what a confirmation shows before it is retired or restored. */
  entry(id: string): LogEntry | undefined {
    const r = queryRows(this.store.db, 'SELECT id, day, text, scope, source, created_at, path FROM notes WHERE id = ?', [id])[0];
    return r && { id: String(r.id), day: String(r.day), text: String(r.text), scope: String(r.scope), source: String(r.source), created_at: iso(Number(r.created_at)), path: String(r.path) };
  }

  /** Vault notes in recall, newest first (by their front-matter date, else when they were indexed). */
  vaultNotes(limit: number): { items: VaultNote[]; total: number } {
    const live = "retired_at IS NULL AND kind != 'daily' AND skipped IS NULL";
    const rows = queryRows(
      this.store.db,
      `SELECT path, kind, coalesce(title, path) AS title, scope, coalesce(note_date, indexed_at) AS at FROM vault_files WHERE ${live} ORDER BY at DESC, path LIMIT ?`,
      [clamp(limit)],
    );
    const items = rows.map((r) => ({ id: `note:${String(r.path)}`, path: String(r.path), kind: String(r.kind), title: String(r.title), scope: String(r.scope), at: iso(Number(r.at)) }));
    return { items, total: Number(queryScalar(this.store.db, `SELECT count(*) FROM vault_files WHERE ${live}`) ?? 0) };
  }

  /** The things facts are about, most recently touched first: memory_map's own list. */
  entities(limit: number): { items: EntitySummary[]; total: number } {
    return entities(this.store.db, clamp(limit), undefined, undefined);
  }

  /** Retired facts, entries and notes, latest first: memory_map's own list, so restore_memory takes these ids. */
  retired(limit: number): { items: RetiredSummary[]; total: number } {
    return retired(this.store.db, clamp(limit), undefined, undefined);
  }

  /**
   * Changes whenever memory does, for the price of two counts and one read: facts and notes are
   * only ever appended (a new value supersedes, nothing is deleted), so the row counts move on
   * every save; retiring, restoring and indexing the vault move the vault version.
   */
  version(): string {
    return String(queryScalar(this.store.db, `SELECT (SELECT count(*) FROM facts) || ':' || (SELECT count(*) FROM notes) || ':' || (SELECT v FROM vault_version)`) ?? '');
  }

  /**
   * A mark that moves whenever anything the memory browser shows does: memory (version()), error
   * fixes (each confirmation bumps times_recorded), rules and their decisions, requests (asked,
   * answered again, closed) and imported sessions. Rows in these tables are only ever added or
   * counted up, so sums and maxima move on every write — except imported sessions, which a person
   * may forget: the tombstones' count and newest time move then. One query, cheap enough to ask
   * every few seconds while the view is visible.
   */
  browseVersion(): string {
    const others = queryScalar(
      this.store.db,
      `SELECT (SELECT coalesce(sum(times_recorded), 0) FROM errors)
        || ':' || (SELECT count(*) FROM rules) || ':' || (SELECT count(*) FROM rule_decisions)
        || ':' || (SELECT count(*) + coalesce(sum(answers), 0) + count(closed_at) FROM agent_requests)
        || ':' || (SELECT count(*) FROM sessions) || ':' || (SELECT coalesce(max(id), 0) FROM events)
        || ':' || (SELECT count(*) || '.' || coalesce(max(forgotten_at), 0) FROM forgotten_sessions)`,
    );
    return `${this.version()}|${String(others ?? '')}`;
  }

  /** The memory browser's requests section: every request between agents, newest first (requestOverview). */
  requests(limit: number): RequestOverview {
    return requestOverview(this.store, limit);
  }
}

function clamp(limit: number): number {
  return Math.max(1, Math.min(RECENT_MAX, Math.floor(limit)));
}

function toItem(r: Record<string, SqlValue>): BrowseItem {
  const base = { text: String(r.text), scope: String(r.scope), created_at: iso(Number(r.at)) };
  if (r.kind === 'fact') {
    return { kind: 'fact', id: `fact:${String(r.id)}`, subject: String(r.subject), predicate: String(r.predicate), object: String(r.object), ...base };
  }
  return { kind: 'note', id: String(r.id), ...base };
}
