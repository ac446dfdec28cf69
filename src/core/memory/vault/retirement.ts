import * as fs from 'node:fs';
import { refuse, type Refusal } from '../../refusal';
import type { Decision, Store } from '../../store/store';
import { queryRows, type Database, type SqlValue } from '../../store/sqlite';
import { iso } from '../../text/time';
import { anchorOfId } from './dailyFile';
import { absolutePath, classifyPath } from './vaultLayout';
import type { MemoryRestored, MemoryRetired } from './vaultSchema';
import type { VaultService } from './vaultService';
import { insertEntryFile, removeEntryFile, writeFileSynced } from './vaultWriter';

/**
 * retire_memory / restore_memory. Retiring takes a memory out of recall and keeps it: a fact
 * stays in the ledger, an entry's block leaves its day log, a note's file leaves the vault — the
 * text of each stays in the store, so restore puts it back exactly. Restore never overwrites:
 * a file that now occupies a retired note's path wins, and the call says so.
 *
 * Before a file is touched, that file is indexed, so an edit a person made and nobody indexed
 * yet is neither lost by a retire nor overwritten by a restore.
 */
export async function retireMemory(store: Store, vault: VaultService, id: string): Promise<object | Refusal> {
  if (id.startsWith('fact:')) {
    return store.commit((db) => {
      const row = factRow(db, id);
      if (!row) return { result: refuse(`no fact ${id.slice(0, 80)} in this store`) };
      if (row.retired_at !== null) return { result: refuse(`${id} is already retired (at ${iso(Number(row.retired_at))}); restore_memory puts it back`) };
      const op: MemoryRetired = { op: 'memory.retired', at: store.now, id };
      return { op, result: { ok: true as const, retired: id, kind: 'fact', subject: String(row.subject), predicate: String(row.predicate), object: String(row.object), scope: String(row.scope) } };
    });
  }
  if (id.startsWith('entry:')) {
    const before = entryRow(store.db, id);
    if (!before) return refuse(`no entry ${id.slice(0, 160)} in this store`);
    if (before.retired_at !== null) return refuse(`${id} is already retired (at ${iso(Number(before.retired_at))}); restore_memory puts it back`);
    const path = String(before.path);
    return commitAfterIndexing(store, vault, path, (db) => {
      const row = entryRow(db, id);
      if (row?.retired_at !== null) return { result: { ok: true as const, retired: id, kind: 'entry', path, note: `its block had already been deleted from ${path} by hand; indexing took it out of recall` } };
      const { found, stat } = removeEntryFile(db, vault.root, path, anchorOfId(id));
      const op: MemoryRetired = { op: 'memory.retired', at: store.now, id, daily: { path, stat } };
      return { op, result: { ok: true as const, retired: id, kind: 'entry', path, removed_from_file: found } };
    });
  }
  if (id.startsWith('note:')) {
    const path = id.slice(5);
    const place = classifyPath(path);
    if ('problem' in place) return refuse(`${id.slice(0, 160)}: ${place.problem}`);
    if (place.kind === 'daily') return refuse(`${path} is a day log: retire its entries one by one (entry:${path}#<hash> ids, listed by read_memory ${id})`);
    return commitAfterIndexing(store, vault, path, (db) => {
      const rec = liveNote(db, path);
      if (!rec) {
        const gone = latestRetired(db, path);
        return { result: gone ? refuse(`${id} is already retired (at ${iso(Number(gone.retired_at))}); restore_memory puts it back`) : refuse(`no note ${path} in the vault`) };
      }
      fs.rmSync(absolutePath(vault.root, path), { force: true });
      const op: MemoryRetired = { op: 'memory.retired', at: store.now, id, fileId: String(rec.id) };
      return { op, result: { ok: true as const, retired: id, kind: String(rec.kind), path, file_removed: true, note: 'the text stays in the store; restore_memory writes the file back' } };
    });
  }
  return refuse(`id "${id.slice(0, 120)}" is not a memory id: use note:<path>, entry:<path>#<hash> or fact:<id>`);
}

export async function restoreMemory(store: Store, vault: VaultService, id: string): Promise<object | Refusal> {
  if (id.startsWith('fact:')) {
    return store.commit((db) => {
      const row = factRow(db, id);
      if (!row) return { result: refuse(`no fact ${id.slice(0, 80)} in this store`) };
      if (row.retired_at === null) return { result: refuse(`${id} is not retired: there is nothing to restore`) };
      const op: MemoryRestored = { op: 'memory.restored', at: store.now, id };
      const status = row.superseded_at === null ? 'current' : 'historical';
      return { op, result: { ok: true as const, restored: id, kind: 'fact', status, ...(status === 'historical' ? { note: 'a newer value was saved while it was retired, so it returns as history' } : {}) } };
    });
  }
  if (id.startsWith('entry:')) {
    const before = entryRow(store.db, id);
    if (!before) return refuse(`no entry ${id.slice(0, 160)} in this store`);
    if (before.retired_at === null) return refuse(`${id} is not retired: there is nothing to restore`);
    const path = String(before.path);
    return commitAfterIndexing(store, vault, path, (db) => {
      const row = entryRow(db, id);
      if (!row) return { result: refuse(`no entry ${id.slice(0, 160)} in this store`) };
      if (row.retired_at === null) return { result: { ok: true as const, restored: id, kind: 'entry', path, note: `its block was already back in ${path}; indexing restored it` } };
      const block = { anchor: anchorOfId(id), at: Number(row.created_at), timezone: row.timezone === null ? null : String(row.timezone), source: String(row.source), text: String(row.text) };
      const stat = insertEntryFile(db, vault.root, path, String(row.day), block);
      const op: MemoryRestored = { op: 'memory.restored', at: store.now, id, daily: { path, stat } };
      return { op, result: { ok: true as const, restored: id, kind: 'entry', path } };
    });
  }
  if (id.startsWith('note:')) {
    const path = id.slice(5);
    const place = classifyPath(path);
    if ('problem' in place) return refuse(`${id.slice(0, 160)}: ${place.problem}`);
    if (place.kind === 'daily') return refuse(`${path} is a day log: restore its entries one by one (the entry: ids memory_map lists under retired)`);
    return commitAfterIndexing(store, vault, path, (db) => {
      const rec = latestRetired(db, path);
      if (!rec) return { result: refuse(`no retired note ${path}: retire_memory has not taken one out of the vault at that path`) };
      const abs = absolutePath(vault.root, path);
      const occupied = () =>
        refuse(`restore_memory does not overwrite: a file now occupies ${path} (${abs}). Move or rename that file, then call restore_memory again. Nothing was changed.`);
      if (fs.existsSync(abs) || liveNote(db, path)) return { result: occupied() };
      const text = queryRows(db, 'SELECT text FROM note_chunks WHERE file_id = ? ORDER BY seq', [String(rec.id)]).map((c) => String(c.text)).join('');
      let stat;
      try {
        stat = writeFileSynced(abs, text, true);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { result: occupied() };
        throw err;
      }
      const op: MemoryRestored = { op: 'memory.restored', at: store.now, id, fileId: String(rec.id), stat };
      return { op, result: { ok: true as const, restored: id, kind: String(rec.kind), path, file: abs, bytes: stat.size } };
    });
  }
  return refuse(`id "${id.slice(0, 120)}" is not a memory id: use note:<path>, entry:<path>#<hash> or fact:<id>`);
}

/**
 * Indexes the one file a retire or restore touches before deciding, so a person's unindexed edit
 * is in the store when `decide` looks, and afterwards tells the monitor the vault moved.
 */
async function commitAfterIndexing<D extends Decision<unknown>>(store: Store, vault: VaultService, path: string, decide: (db: Database) => D): Promise<D['result']> {
  await vault.indexPaths([path]);
  const result = await store.commit(decide);
  vault.monitor.invalidate();
  return result;
}

function factRow(db: Database, id: string): Record<string, SqlValue> | undefined {
  return queryRows(db, 'SELECT subject, predicate, object, scope, superseded_at, retired_at FROM facts WHERE id = ?', [id.slice(5)])[0];
}

function entryRow(db: Database, id: string): Record<string, SqlValue> | undefined {
  return queryRows(db, 'SELECT path, day, text, source, timezone, created_at, retired_at FROM notes WHERE id = ?', [id])[0];
}

function liveNote(db: Database, path: string): Record<string, SqlValue> | undefined {
  return queryRows(db, "SELECT id, kind FROM vault_files WHERE path = ? AND retired_at IS NULL AND kind != 'daily'", [path])[0];
}

function latestRetired(db: Database, path: string): Record<string, SqlValue> | undefined {
  return queryRows(db, "SELECT id, kind, retired_at FROM vault_files WHERE path = ? AND retired_at IS NOT NULL AND kind != 'daily' ORDER BY retired_at DESC, id DESC LIMIT 1", [path])[0];
}
