import type { Operation } from '../../store/journal';
import { queryRows, queryScalar, type Database } from '../../store/sqlite';
import {
  bumpVaultVersion,
  dailyRecordId,
  ftsDelete,
  ftsInsert,
  indexChunks,
  insertEntryRow,
  recordDailyStat,
  restoreEntryRow,
  retireEntryRow,
  touchFile,
  unindexChunks,
} from './indexRows';
import { MEMORY_FTS_TABLE } from './tableNames';
import type { IndexedFile, MemoryRestored, MemoryRetired, VaultIndexed } from './vaultSchema';

/**
 * Appliers for what the vault contributes to the journal. They run in every process on replay,
 * so they only copy what the writer decided into the database: no file is read or written here.
 */

function applyVaultIndexed(db: Database, op: Operation): void {
  const v = op as VaultIndexed;
  for (const f of v.files) upsertFile(db, f, v.at);
  for (const id of v.removedFiles) removeFile(db, id, v.at);
  for (const e of v.entriesAdded) {
    if (queryScalar(db, 'SELECT 1 FROM notes WHERE id = ?', [e.id]) !== undefined) continue;
    insertEntryRow(db, { ...e, timezone: null, cites: [], factId: null });
  }
  for (const e of v.entriesEdited) {
    const row = queryRows(db, 'SELECT fts_docid, created_at, scope FROM notes WHERE id = ?', [e.id])[0];
    if (!row) continue;
    ftsDelete(db, MEMORY_FTS_TABLE, row.fts_docid);
    const docid = row.fts_docid === null ? null : ftsInsert(db, MEMORY_FTS_TABLE, e.text, Number(row.created_at), String(row.scope), e.id);
    db.run('UPDATE notes SET text = ?, edited_at = ?, fts_docid = ? WHERE id = ?', [e.text, v.at, docid, e.id]);
    db.run('DELETE FROM embeddings WHERE key = ?', [e.id]);
  }
  for (const id of v.entriesRemoved) retireEntryRow(db, id, v.at);
  for (const id of v.entriesBack) restoreEntryRow(db, id);
  bumpVaultVersion(db);
}

function upsertFile(db: Database, f: IndexedFile, at: number): void {
  const existing = queryRows(db, 'SELECT id, retired_at FROM vault_files WHERE id = ?', [f.id])[0];
  if (!existing) {
    // A live record already at this path would break the one-live-file-per-path rule: the
    // writer never decides that, so a replayed line that does is skipped, not forced in.
    if (queryScalar(db, 'SELECT 1 FROM vault_files WHERE path = ? AND retired_at IS NULL', [f.path]) !== undefined) return;
    db.run(
      `INSERT INTO vault_files(id, path, scope, kind, size, mtime_ms, hash, skipped, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [f.id, f.path, f.scope, f.kind, f.stat.size, f.stat.mtimeMs, f.stat.hash, f.skipped ?? null, at],
    );
  } else {
    db.run('UPDATE vault_files SET size = ?, mtime_ms = ?, hash = ?, skipped = ?, indexed_at = ? WHERE id = ?', [
      f.stat.size, f.stat.mtimeMs, f.stat.hash, f.skipped ?? null, at, f.id,
    ]);
    // A day log written again after it was deleted keeps its record id: it is live again.
    if (existing.retired_at !== null && f.kind === 'daily') db.run('UPDATE vault_files SET retired_at = NULL WHERE id = ?', [f.id]);
  }
  touchFile(db, f.id);
  if (!f.content) return;
  const c = f.content;
  unindexChunks(db, f.id, f.kind);
  db.run(`DELETE FROM embeddings WHERE key >= ? AND key < ?`, [`chunk:${f.id}:`, `chunk:${f.id};`]);
  db.run('DELETE FROM note_chunks WHERE file_id = ?', [f.id]);
  db.run('UPDATE vault_files SET title = ?, aliases = ?, tags = ?, note_date = ?, source = ? WHERE id = ?', [
    c.title, JSON.stringify(c.aliases), JSON.stringify(c.tags), c.noteDate, c.source, f.id,
  ]);
  c.chunks.forEach((chunk, seq) => db.run('INSERT INTO note_chunks(file_id, seq, text, line) VALUES (?, ?, ?, ?)', [f.id, seq, chunk.text, chunk.line]));
  indexChunks(db, f.id, f.path, f.kind, f.scope, c.noteDate ?? at);
  touchFile(db, f.id);
}

function removeFile(db: Database, id: string, at: number): void {
  const row = queryRows(db, 'SELECT kind FROM vault_files WHERE id = ? AND retired_at IS NULL', [id])[0];
  if (!row) return;
  if (row.kind !== 'daily') unindexChunks(db, id, String(row.kind));
  db.run('UPDATE vault_files SET retired_at = ? WHERE id = ?', [at, id]);
  touchFile(db, id);
}

function applyRetired(db: Database, op: Operation): void {
  const r = op as MemoryRetired;
  if (r.id.startsWith('fact:')) {
    const factId = r.id.slice('fact:'.length);
    const docid = queryScalar(db, 'SELECT fts_docid FROM facts WHERE id = ? AND retired_at IS NULL', [factId]);
    if (docid === undefined) return;
    ftsDelete(db, MEMORY_FTS_TABLE, docid);
    db.run('UPDATE facts SET retired_at = ?, fts_docid = NULL WHERE id = ?', [r.at, factId]);
  } else if (r.id.startsWith('entry:')) {
    retireEntryRow(db, r.id, r.at);
  } else if (r.fileId) {
    removeFile(db, r.fileId, r.at);
  }
  if (r.daily?.stat) recordDailyStat(db, r.daily.path, scopeOfDaily(db, r.daily.path), r.daily.stat, r.at);
  bumpVaultVersion(db);
}

function applyRestored(db: Database, op: Operation): void {
  const r = op as MemoryRestored;
  if (r.id.startsWith('fact:')) {
    const factId = r.id.slice('fact:'.length);
    const row = queryRows(db, 'SELECT subject, predicate, object, scope, recorded_at, superseded_at FROM facts WHERE id = ? AND retired_at IS NOT NULL', [factId])[0];
    if (!row) return;
    // Back exactly as it was: a value that a newer one superseded meanwhile returns as history.
    const docid =
      row.superseded_at === null
        ? ftsInsert(db, MEMORY_FTS_TABLE, `${String(row.subject)} ${String(row.predicate)} ${String(row.object)}`, Number(row.recorded_at), String(row.scope), r.id)
        : null;
    db.run('UPDATE facts SET retired_at = NULL, fts_docid = ? WHERE id = ?', [docid, factId]);
  } else if (r.id.startsWith('entry:')) {
    restoreEntryRow(db, r.id);
  } else if (r.fileId) {
    const row = queryRows(db, 'SELECT path, kind, scope, note_date, indexed_at FROM vault_files WHERE id = ? AND retired_at IS NOT NULL', [r.fileId])[0];
    if (!row) return;
    if (queryScalar(db, 'SELECT 1 FROM vault_files WHERE path = ? AND retired_at IS NULL', [String(row.path)]) !== undefined) return;
    db.run('UPDATE vault_files SET retired_at = NULL WHERE id = ?', [r.fileId]);
    if (r.stat) db.run('UPDATE vault_files SET size = ?, mtime_ms = ?, hash = ? WHERE id = ?', [r.stat.size, r.stat.mtimeMs, r.stat.hash, r.fileId]);
    indexChunks(db, r.fileId, String(row.path), String(row.kind), String(row.scope), Number(row.note_date ?? row.indexed_at));
    touchFile(db, r.fileId);
  }
  if (r.daily?.stat) recordDailyStat(db, r.daily.path, scopeOfDaily(db, r.daily.path), r.daily.stat, r.at);
  bumpVaultVersion(db);
}

function scopeOfDaily(db: Database, path: string): string {
  const scope = queryScalar(db, 'SELECT scope FROM vault_files WHERE id = ?', [dailyRecordId(path)]) ?? queryScalar(db, 'SELECT scope FROM notes WHERE path = ? LIMIT 1', [path]);
  return scope === undefined || scope === null ? 'global' : String(scope);
}

export const vaultAppliers = {
  'memory.vault.indexed': applyVaultIndexed,
  'memory.retired': applyRetired,
  'memory.restored': applyRestored,
};
