import { refuse, type Refusal } from '../../refusal';
import { queryRows, type Database, type SqlValue } from '../../store/sqlite';
import { iso } from '../../text/time';
import { absolutePath, classifyPath } from '../vault/vaultLayout';
import { parseList } from './jsonList';

/**
 * read_memory: one memory in full, retired or not (a retired one says so, which is what
 * restore_memory needs to be asked about), with its metadata and the facts extracted from it:
 * the fact an entry was saved with, and facts whose `cites` name the memory.
 */
export function readMemory(db: Database, vaultRoot: string, changedPaths: ReadonlySet<string>, id: string): object | Refusal {
  if (id.startsWith('fact:')) return readFact(db, id);
  if (id.startsWith('entry:')) return readEntry(db, vaultRoot, changedPaths, id);
  if (id.startsWith('note:')) return readNote(db, vaultRoot, changedPaths, id);
  return refuse(`id "${id.slice(0, 120)}" is not a memory id: use note:<path>, entry:<path>#<hash> or fact:<id> as memory_map, search_text or get_context return them`);
}

function readFact(db: Database, id: string): object | Refusal {
  const row = queryRows(db, `SELECT *, coalesce(valid_from, recorded_at) AS vf, coalesce(valid_to, superseded_at) AS vt FROM facts WHERE id = ?`, [id.slice(5)])[0];
  if (!row) return refuse(`no fact ${id.slice(0, 80)}: it was never saved in this store`);
  const history = queryRows(
    db,
    `SELECT id, object, source, recorded_at, superseded_at, retired_at, coalesce(valid_from, recorded_at) AS vf, coalesce(valid_to, superseded_at) AS vt
       FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? ORDER BY recorded_at DESC, id DESC`,
    [row.subject_key as string, row.predicate_key as string, row.scope as string],
  ).map((h) => ({
    id: `fact:${String(h.id)}`,
    object: String(h.object),
    source: String(h.source),
    status: h.superseded_at === null ? 'current' : 'historical',
    valid_from: iso(Number(h.vf)),
    valid_to: h.vt === null ? null : iso(Number(h.vt)),
    recorded_at: iso(Number(h.recorded_at)),
    ...(h.retired_at !== null ? { retired_at: iso(Number(h.retired_at)) } : {}),
  }));
  const entry = queryRows(db, 'SELECT id FROM notes WHERE fact_id = ? ORDER BY created_at LIMIT 1', [row.id as string])[0];
  return {
    ok: true,
    id,
    kind: 'fact',
    subject: String(row.subject),
    predicate: String(row.predicate),
    object: String(row.object),
    scope: String(row.scope),
    source: String(row.source),
    status: row.superseded_at === null ? 'current' : 'historical',
    valid_from: iso(Number(row.vf)),
    valid_to: row.vt === null ? null : iso(Number(row.vt)),
    recorded_at: iso(Number(row.recorded_at)),
    superseded_by: row.superseded_by === null ? null : `fact:${String(row.superseded_by)}`,
    retired_at: row.retired_at === null ? null : iso(Number(row.retired_at)),
    statement: row.statement === null ? null : String(row.statement),
    cites: parseList(row.cites),
    entry: entry ? String(entry.id) : null,
    history,
  };
}

function readEntry(db: Database, root: string, changed: ReadonlySet<string>, id: string): object | Refusal {
  const row = queryRows(db, 'SELECT * FROM notes WHERE id = ?', [id])[0];
  if (!row) return refuse(`no entry ${id.slice(0, 160)} in this store (memory_map lists the ids there are)`);
  const path = String(row.path);
  return {
    ok: true,
    id,
    kind: 'entry',
    path,
    day: String(row.day),
    scope: String(row.scope),
    source: String(row.source),
    timezone: row.timezone === null ? null : String(row.timezone),
    created_at: iso(Number(row.created_at)),
    edited_at: row.edited_at === null ? null : iso(Number(row.edited_at)),
    retired_at: row.retired_at === null ? null : iso(Number(row.retired_at)),
    text: String(row.text),
    cites: parseList(row.cites),
    facts: row.fact_id === null ? citingFacts(db, [id]) : [...factSummaries(db, 'id = ?', [row.fact_id as string]), ...citingFacts(db, [id])],
    file: absolutePath(root, path),
    stale: changed.has(path),
  };
}

function readNote(db: Database, root: string, changed: ReadonlySet<string>, id: string): object | Refusal {
  const path = id.slice('note:'.length);
  const place = classifyPath(path);
  if ('problem' in place) return refuse(`${id.slice(0, 160)}: ${place.problem}`);
  if (place.kind === 'daily') {
    const entries = queryRows(db, 'SELECT id, created_at, source, text FROM notes WHERE path = ? AND retired_at IS NULL ORDER BY created_at, id', [path]);
    if (!entries.length) return refuse(`no entries in ${path}: nothing was logged for that day in this scope`);
    return {
      ok: true,
      id,
      kind: 'daily',
      path,
      day: place.day,
      scope: place.scope,
      entries: entries.map((e) => ({ id: String(e.id), created_at: iso(Number(e.created_at)), source: String(e.source), text: String(e.text) })),
      file: absolutePath(root, path),
      stale: changed.has(path),
    };
  }
  // The live note at the path, else the most recently retired one (what restore would bring back).
  const row = queryRows(db, 'SELECT * FROM vault_files WHERE path = ? ORDER BY retired_at IS NOT NULL, retired_at DESC LIMIT 1', [path])[0];
  if (!row) return refuse(`no note ${path} in the index${changed.has(path) ? ': the file is new; run index_memory' : ''}`);
  const chunks = queryRows(db, 'SELECT text FROM note_chunks WHERE file_id = ? ORDER BY seq', [row.id as string]);
  return {
    ok: true,
    id,
    kind: String(row.kind),
    path,
    scope: String(row.scope),
    title: row.title === null ? null : String(row.title),
    aliases: parseList(row.aliases),
    tags: parseList(row.tags),
    source: row.source === null ? null : String(row.source),
    date: row.note_date === null ? null : iso(Number(row.note_date)),
    modified_at: iso(Math.floor(Number(row.mtime_ms))),
    indexed_at: iso(Number(row.indexed_at)),
    bytes: Number(row.size),
    chunks: chunks.length,
    retired_at: row.retired_at === null ? null : iso(Number(row.retired_at)),
    ...(row.skipped !== null ? { skipped: String(row.skipped) } : {}),
    text: chunks.map((c) => String(c.text)).join(''),
    facts: citingFacts(db, [id, path]),
    file: absolutePath(root, path),
    stale: row.retired_at === null && changed.has(path),
  };
}

/** Facts whose `cites` name one of these memory ids or paths. */
function citingFacts(db: Database, names: string[]): object[] {
  const clauses = names.map(() => "cites LIKE ? ESCAPE '\\'").join(' OR ');
  return factSummaries(db, `(${clauses})`, names.map((n) => `%${JSON.stringify(n).replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
}

function factSummaries(db: Database, where: string, params: SqlValue[]): object[] {
  return queryRows(db, `SELECT id, subject, predicate, object, superseded_at, retired_at FROM facts WHERE ${where} ORDER BY recorded_at DESC LIMIT 50`, params).map((f) => ({
    id: `fact:${String(f.id)}`,
    subject: String(f.subject),
    predicate: String(f.predicate),
    object: String(f.object),
    status: f.retired_at !== null ? 'retired' : f.superseded_at === null ? 'current' : 'historical',
  }));
}
