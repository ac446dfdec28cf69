import type { Store } from '../store/store';
import { queryRows, queryScalar, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';

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

  /** The facts behind `fact:<id>` references, keyed by reference; unknown ones are absent. */
  factsByRef(refs: readonly string[]): Map<string, BrowseFact> {
    const ids = refs.filter((r) => r.startsWith('fact:')).map((r) => r.slice('fact:'.length));
    if (!ids.length) return new Map();
    const rows = queryRows(
      this.store.db,
      `SELECT 'fact' AS kind, id, subject, predicate, object, subject || ' ' || predicate || ' ' || object AS text, scope, recorded_at AS at
         FROM facts WHERE id IN (${ids.map(() => '?').join(',')})`,
      ids,
    );
    const out = new Map<string, BrowseFact>();
    for (const row of rows) {
      const item = toItem(row);
      if (item.kind === 'fact') out.set(item.id, item);
    }
    return out;
  }

  /**
   * Changes whenever memory does, for the price of two counts and one read: facts and notes are
   * only ever appended (a new value supersedes, nothing is deleted), so the row counts move on
   * every save; retiring, restoring and indexing the vault move the vault version.
   */
  version(): string {
    return String(queryScalar(this.store.db, `SELECT (SELECT count(*) FROM facts) || ':' || (SELECT count(*) FROM notes) || ':' || (SELECT v FROM vault_version)`) ?? '');
  }
}

function toItem(r: Record<string, SqlValue>): BrowseItem {
  const base = { text: String(r.text), scope: String(r.scope), created_at: iso(Number(r.at)) };
  if (r.kind === 'fact') {
    return { kind: 'fact', id: `fact:${String(r.id)}`, subject: String(r.subject), predicate: String(r.predicate), object: String(r.object), ...base };
  }
  return { kind: 'note', id: String(r.id), ...base };
}
