import type { Store } from '../store/store';
import { queryRows, type SqlValue } from '../store/sqlite';
import { normalizeKey } from '../text/textRules';
import { iso } from '../text/time';

export interface NameCount {
  name: string;
  count: number;
}

export interface IdEntry {
  id: string;
  detail: string;
}

export interface FactKey {
  subject: string;
  predicate: string;
  scope: string;
  retired: boolean;
}

export interface EntryRow {
  id: string;
  path: string;
  text: string;
  factId: string | null;
  createdAt: string;
  retired: boolean;
}

export interface NoteFile {
  path: string;
  /** Only retired records hold this path: the note was taken out of recall. */
  retired: boolean;
}

/**
 * Read-only look-ups the notes language server needs and no tool exposes: names by prefix
 * (for completion), ids by prefix, and what one id points at. One more row than asked is read
 * so callers can say "more" without a second count query.
 */
export class MemoryLookup {
  constructor(private readonly store: Store) {}

  /** Fact subjects starting with `prefix` (case and spacing ignored), most used first. */
  entities(prefix: string, limit: number): { items: NameCount[]; more: boolean } {
    return this.names('subject', 'subject_key', prefix, limit);
  }

  predicates(prefix: string, limit: number): { items: NameCount[]; more: boolean } {
    return this.names('predicate', 'predicate_key', prefix, limit);
  }

  /** Current facts whose id starts with `prefix` (without the `fact:` part), newest first. */
  factIds(prefix: string, limit: number): { items: IdEntry[]; more: boolean } {
    const rows = queryRows(
      this.store.db,
      `SELECT id, subject, predicate, object FROM facts
        WHERE superseded_at IS NULL AND retired_at IS NULL AND substr(id, 1, ?) = ? ORDER BY recorded_at DESC, id DESC LIMIT ?`,
      [prefix.length, prefix, limit + 1],
    );
    return page(rows.map((r) => ({ id: `fact:${String(r.id)}`, detail: `${String(r.subject)} · ${String(r.predicate)} · ${String(r.object)}` })), limit);
  }

  /** Note entries whose id (which already starts with `entry:`) starts with `prefix`, newest first. */
  entryIds(prefix: string, limit: number): { items: IdEntry[]; more: boolean } {
    const rows = queryRows(
      this.store.db,
      'SELECT id, text FROM notes WHERE retired_at IS NULL AND substr(id, 1, ?) = ? ORDER BY created_at DESC, id DESC LIMIT ?',
      [prefix.length, prefix, limit + 1],
    );
    return page(rows.map((r) => ({ id: String(r.id), detail: String(r.text) })), limit);
  }

  /** Vault paths the index knows (indexed notes and day logs with live entries), relative to the vault. */
  notePaths(prefix: string, limit: number): string[] {
    const rows = queryRows(
      this.store.db,
      `SELECT path FROM (
         SELECT path FROM vault_files WHERE retired_at IS NULL
         UNION SELECT path FROM notes WHERE retired_at IS NULL
       ) WHERE substr(path, 1, ?) = ? ORDER BY path LIMIT ?`,
      [prefix.length, prefix, limit],
    );
    return rows.map((r) => String(r.path));
  }

  /** What the index knows of a vault path: live, only retired, or nothing (undefined). */
  notePath(path: string): NoteFile | undefined {
    const live = queryRows(
      this.store.db,
      'SELECT 1 FROM vault_files WHERE path = ? AND retired_at IS NULL UNION ALL SELECT 1 FROM notes WHERE path = ? AND retired_at IS NULL LIMIT 1',
      [path, path],
    );
    if (live.length) return { path, retired: false };
    const retired = queryRows(this.store.db, 'SELECT 1 FROM vault_files WHERE path = ? LIMIT 1', [path]);
    return retired.length ? { path, retired: true } : undefined;
  }

  /** The subject, predicate and scope a `fact:<id>` belongs to, so its whole history can be read. */
  factKey(id: string): FactKey | undefined {
    const row = queryRows(this.store.db, 'SELECT subject, predicate, scope, retired_at FROM facts WHERE id = ?', [stripPrefix(id, 'fact:')])[0];
    return row ? { subject: String(row.subject), predicate: String(row.predicate), scope: String(row.scope), retired: row.retired_at !== null } : undefined;
  }

  /** The first of `candidates` that some fact is about (case and spacing ignored), or undefined. */
  firstKnownSubject(candidates: readonly string[]): string | undefined {
    const keys = [...new Set(candidates.map(normalizeKey).filter(Boolean))];
    if (!keys.length) return undefined;
    const rows = queryRows(this.store.db, `SELECT DISTINCT subject_key FROM facts WHERE retired_at IS NULL AND subject_key IN (${keys.map(() => '?').join(',')})`, keys);
    const known = new Set(rows.map((r) => String(r.subject_key)));
    return candidates.find((c) => known.has(normalizeKey(c)));
  }

  entry(id: string): EntryRow | undefined {
    const row = queryRows(this.store.db, 'SELECT id, path, text, fact_id, created_at, retired_at FROM notes WHERE id = ?', [id])[0];
    return row ? toEntry(row) : undefined;
  }

  /** The sentence a fact was saved with, kept as a note entry, if there was one. */
  entryOfFact(id: string): EntryRow | undefined {
    const row = queryRows(this.store.db, 'SELECT id, path, text, fact_id, created_at, retired_at FROM notes WHERE fact_id = ? AND retired_at IS NULL ORDER BY created_at LIMIT 1', [stripPrefix(id, 'fact:')])[0];
    return row ? toEntry(row) : undefined;
  }

  private names(column: 'subject' | 'predicate', keyColumn: string, prefix: string, limit: number): { items: NameCount[]; more: boolean } {
    const key = normalizeKey(prefix);
    // The most recent spelling of a name is the one offered; the key groups its variants.
    const rows = queryRows(
      this.store.db,
      `SELECT ${keyColumn} AS k, count(*) AS n,
              (SELECT f2.${column} FROM facts f2 WHERE f2.${keyColumn} = f.${keyColumn} AND f2.retired_at IS NULL ORDER BY f2.recorded_at DESC LIMIT 1) AS name
         FROM facts f WHERE retired_at IS NULL AND substr(${keyColumn}, 1, ?) = ? GROUP BY ${keyColumn} ORDER BY n DESC, k LIMIT ?`,
      [key.length, key, limit + 1],
    );
    return page(rows.map((r) => ({ name: String(r.name), count: Number(r.n) })), limit);
  }
}

function page<T>(rows: T[], limit: number): { items: T[]; more: boolean } {
  return { items: rows.slice(0, limit), more: rows.length > limit };
}

function stripPrefix(id: string, prefix: string): string {
  return id.startsWith(prefix) ? id.slice(prefix.length) : id;
}

function toEntry(r: Record<string, SqlValue>): EntryRow {
  return {
    id: String(r.id),
    path: String(r.path),
    text: String(r.text),
    factId: r.fact_id === null ? null : `fact:${String(r.fact_id)}`,
    createdAt: iso(Number(r.created_at)),
    retired: r.retired_at !== null,
  };
}
