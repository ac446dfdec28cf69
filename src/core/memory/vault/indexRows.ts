import { indexTerms } from '../../search/ftsSearch';
import { queryScalar, type Database } from '../../store/sqlite';
import { MEMORY_FTS_TABLE } from './tableNames';
import { HISTORY_NOTES_FTS, type FileStat } from './vaultSchema';

/**
 * Row-level helpers the memory appliers share, so every path that puts text into recall (a
 * saved entry, an indexed note, a restore) writes the same rows the same way. Appliers only.
 */

export function ftsInsert(db: Database, table: string, body: string, createdAt: number, scope: string, ref: string): number {
  db.run(`INSERT INTO ${table}(terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)`, [indexTerms(body), body, createdAt, scope, ref]);
  return Number(queryScalar(db, 'SELECT last_insert_rowid()'));
}

export function ftsDelete(db: Database, table: string, docid: unknown): void {
  if (docid !== null && docid !== undefined) db.run(`DELETE FROM ${table} WHERE docid = ?`, [Number(docid)]);
}

/** The FTS table a vault file's chunks live in. */
export function chunkTable(kind: string): string {
  return kind === 'history' ? HISTORY_NOTES_FTS : MEMORY_FTS_TABLE;
}

/** Every change to what the vault index holds moves this, so readers can cache per version. */
export function bumpVaultVersion(db: Database): void {
  db.run('UPDATE vault_version SET v = v + 1');
}

/** A file record changed: it carries the new version, so a reader reloads only the records that moved. */
export function touchFile(db: Database, id: string): void {
  bumpVaultVersion(db);
  db.run('UPDATE vault_files SET version = (SELECT v FROM vault_version) WHERE id = ?', [id]);
}

export interface EntryRow {
  id: string;
  path: string;
  day: string;
  text: string;
  scope: string;
  source: string;
  timezone: string | null;
  cites: string[];
  factId: string | null;
  at: number;
}

export function insertEntryRow(db: Database, e: EntryRow): void {
  const docid = ftsInsert(db, MEMORY_FTS_TABLE, e.text, e.at, e.scope, e.id);
  db.run(
    `INSERT INTO notes(id, path, day, text, scope, source, timezone, cites, fact_id, created_at, fts_docid)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [e.id, e.path, e.day, e.text, e.scope, e.source, e.timezone, JSON.stringify(e.cites), e.factId, e.at, docid],
  );
  bumpVaultVersion(db);
}

/** After a writer changed a day log it knew to be clean, the record follows the file. */
export function recordDailyStat(db: Database, path: string, scope: string, stat: FileStat, at: number): void {
  const id = dailyRecordId(path);
  db.run(
    `INSERT INTO vault_files(id, path, scope, kind, size, mtime_ms, hash, indexed_at) VALUES (?, ?, ?, 'daily', ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, hash = excluded.hash, indexed_at = excluded.indexed_at, retired_at = NULL`,
    [id, path, scope, stat.size, stat.mtimeMs, stat.hash, at],
  );
  touchFile(db, id);
}

/** Day logs are never retired as a whole (their entries are): one record per path, marked retired while the file is gone. */
export function dailyRecordId(path: string): string {
  return `daily:${path}`;
}

/** Takes an entry out of recall: its FTS row goes, the row (and its text) stays for restore. */
export function retireEntryRow(db: Database, id: string, at: number): boolean {
  const docid = queryScalar(db, 'SELECT fts_docid FROM notes WHERE id = ? AND retired_at IS NULL', [id]);
  if (docid === undefined) return false;
  ftsDelete(db, MEMORY_FTS_TABLE, docid);
  db.run('UPDATE notes SET retired_at = ?, fts_docid = NULL WHERE id = ?', [at, id]);
  bumpVaultVersion(db);
  return true;
}

export function restoreEntryRow(db: Database, id: string): boolean {
  const row = db.exec('SELECT text, created_at, scope FROM notes WHERE id = ? AND retired_at IS NOT NULL', [id])[0]?.values[0];
  if (!row) return false;
  const docid = ftsInsert(db, MEMORY_FTS_TABLE, String(row[0]), Number(row[1]), String(row[2]), id);
  db.run('UPDATE notes SET retired_at = NULL, fts_docid = ? WHERE id = ?', [docid, id]);
  bumpVaultVersion(db);
  return true;
}

/** Removes a file's chunks from its FTS table (the chunk rows stay: they are the note's text). */
export function unindexChunks(db: Database, fileId: string, kind: string): void {
  const table = chunkTable(kind);
  const rows = db.exec('SELECT fts_docid FROM note_chunks WHERE file_id = ? AND fts_docid IS NOT NULL', [fileId])[0]?.values ?? [];
  for (const [docid] of rows) ftsDelete(db, table, docid);
  db.run('UPDATE note_chunks SET fts_docid = NULL WHERE file_id = ?', [fileId]);
}

export function indexChunks(db: Database, fileId: string, path: string, kind: string, scope: string, createdAt: number): void {
  const table = chunkTable(kind);
  const rows = db.exec('SELECT seq, text FROM note_chunks WHERE file_id = ? ORDER BY seq', [fileId])[0]?.values ?? [];
  for (const [seq, text] of rows) {
    const docid = ftsInsert(db, table, String(text), createdAt, scope, `note:${path}`);
    db.run('UPDATE note_chunks SET fts_docid = ? WHERE file_id = ? AND seq = ?', [docid, fileId, Number(seq)]);
  }
}
