import * as fs from 'node:fs';
import { absolutePath } from '../memory/vault/vaultLayout';
import { queryRows, queryScalar, type Database, type SqlValue } from '../store/sqlite';
import type { ExportItem, Section } from './exportFormat';

/**
 * What each export section holds, in a stable order so `offset` means the same item on every
 * call: facts by when they were recorded, entries by when they were written, notes by path.
 * The retired section is three lists back to back (facts, entries, notes).
 */

const FACT_COLUMNS = 'id, subject, predicate, object, scope, source, statement, cites, recorded_at, valid_from, valid_to, superseded_at, superseded_by, retired_at';
const ENTRY_COLUMNS = 'id, path, day, text, scope, source, timezone, cites, fact_id, created_at, edited_at, retired_at';
const NOTE_COLUMNS = 'id, path, scope, kind, size, mtime_ms, hash, title, aliases, tags, note_date, source, indexed_at, retired_at';

interface ListSpec {
  count: string;
  rows: string;
  item: (db: Database, root: string, row: Record<string, SqlValue>) => ExportItem;
}

const LISTS: Record<'facts' | 'entries' | 'notes' | 'retiredFacts' | 'retiredEntries' | 'retiredNotes', ListSpec> = {
  facts: {
    count: 'SELECT count(*) FROM facts WHERE retired_at IS NULL',
    rows: `SELECT ${FACT_COLUMNS} FROM facts WHERE retired_at IS NULL ORDER BY recorded_at, id LIMIT ? OFFSET ?`,
    item: (_db, _root, r) => ({ kind: 'fact', id: String(r.id), meta: withIso(r, ['recorded_at', 'valid_from', 'valid_to', 'superseded_at', 'retired_at'], ['cites']) }),
  },
  entries: {
    count: 'SELECT count(*) FROM notes WHERE retired_at IS NULL',
    rows: `SELECT ${ENTRY_COLUMNS} FROM notes WHERE retired_at IS NULL ORDER BY created_at, id LIMIT ? OFFSET ?`,
    item: (_db, _root, r) => ({ kind: 'entry', id: String(r.id), meta: withIso(r, ['created_at', 'edited_at', 'retired_at'], ['cites']) }),
  },
  notes: {
    count: "SELECT count(*) FROM vault_files WHERE retired_at IS NULL AND kind != 'daily'",
    rows: `SELECT ${NOTE_COLUMNS} FROM vault_files WHERE retired_at IS NULL AND kind != 'daily' ORDER BY path, id LIMIT ? OFFSET ?`,
    item: noteItem,
  },
  retiredFacts: {
    count: 'SELECT count(*) FROM facts WHERE retired_at IS NOT NULL',
    rows: `SELECT ${FACT_COLUMNS} FROM facts WHERE retired_at IS NOT NULL ORDER BY recorded_at, id LIMIT ? OFFSET ?`,
    item: (db, root, r) => LISTS.facts.item(db, root, r),
  },
  retiredEntries: {
    count: 'SELECT count(*) FROM notes WHERE retired_at IS NOT NULL',
    rows: `SELECT ${ENTRY_COLUMNS} FROM notes WHERE retired_at IS NOT NULL ORDER BY created_at, id LIMIT ? OFFSET ?`,
    item: (db, root, r) => LISTS.entries.item(db, root, r),
  },
  retiredNotes: {
    count: "SELECT count(*) FROM vault_files WHERE retired_at IS NOT NULL AND kind != 'daily'",
    rows: `SELECT ${NOTE_COLUMNS} FROM vault_files WHERE retired_at IS NOT NULL AND kind != 'daily' ORDER BY retired_at, id LIMIT ? OFFSET ?`,
    item: noteItem,
  },
};

const SECTION_LISTS: Record<Section, ListSpec[]> = {
  ledger: [LISTS.facts],
  'daily-entries': [LISTS.entries],
  notes: [LISTS.notes],
  retired: [LISTS.retiredFacts, LISTS.retiredEntries, LISTS.retiredNotes],
};

export function sectionCount(db: Database, section: Section): number {
  return SECTION_LISTS[section].reduce((n, l) => n + Number(queryScalar(db, l.count) ?? 0), 0);
}

export function exportCounts(db: Database) {
  const one = (l: ListSpec) => Number(queryScalar(db, l.count) ?? 0);
  return {
    facts: one(LISTS.facts),
    current_facts: Number(queryScalar(db, 'SELECT count(*) FROM facts WHERE retired_at IS NULL AND superseded_at IS NULL') ?? 0),
    superseded_facts: Number(queryScalar(db, 'SELECT count(*) FROM facts WHERE retired_at IS NULL AND superseded_at IS NOT NULL') ?? 0),
    daily_entries: one(LISTS.entries),
    notes: one(LISTS.notes),
    retired: { facts: one(LISTS.retiredFacts), entries: one(LISTS.retiredEntries), notes: one(LISTS.retiredNotes) },
  };
}

/** Up to `limit` items of a section from `offset` on. */
export function sectionItems(db: Database, root: string, section: Section, offset: number, limit: number): ExportItem[] {
  const out: ExportItem[] = [];
  let skip = offset;
  for (const list of SECTION_LISTS[section]) {
    if (out.length >= limit) break;
    const n = Number(queryScalar(db, list.count) ?? 0);
    if (skip >= n) {
      skip -= n;
      continue;
    }
    for (const r of queryRows(db, list.rows, [limit - out.length, skip])) out.push(list.item(db, root, r));
    skip = 0;
  }
  return out;
}

function noteItem(db: Database, root: string, r: Record<string, SqlValue>): ExportItem {
  const id = String(r.id);
  // A live note is read from its file (what a person sees); a retired one from the text the store kept.
  let body: string | undefined;
  if (r.retired_at === null) {
    try {
      body = fs.readFileSync(absolutePath(root, String(r.path)), 'utf8');
    } catch {
      body = undefined;
    }
  }
  body ??= queryRows(db, 'SELECT text FROM note_chunks WHERE file_id = ? ORDER BY seq', [id]).map((c) => String(c.text)).join('');
  return { kind: 'note', id, meta: withIso(r, ['mtime_ms', 'note_date', 'indexed_at', 'retired_at'], ['aliases', 'tags']), body };
}

/** The row as stored, JSON columns decoded, with an ISO copy of each time for a human reader. */
function withIso(r: Record<string, SqlValue>, times: string[], jsonColumns: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    out[k] = jsonColumns.includes(k) && typeof v === 'string' ? JSON.parse(v) : v;
    if (times.includes(k) && v !== null) out[`${k}_iso`] = new Date(Math.floor(Number(v))).toISOString();
  }
  return out;
}
