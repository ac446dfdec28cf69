import * as fs from 'node:fs';
import type { FactSaved, NoteAdded } from '../memory/memorySchema';
import { anchorOfId } from '../memory/vault/dailyFile';
import { absolutePath, classifyPath, listVaultFiles } from '../memory/vault/vaultLayout';
import type { MemoryRetired } from '../memory/vault/vaultSchema';
import type { VaultService } from '../memory/vault/vaultService';
import { appendEntryFile, removeEntryFile, writeFileSynced } from '../memory/vault/vaultWriter';
import { Redaction } from '../privacy/redaction';
import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { queryRows, queryScalar } from '../store/sqlite';
import { parseDocument, type ParsedItem } from './exportFormat';

/**
 * `recollect restore <file>`: reads a `renor-export/v1` document back into an EMPTY store, so
 * the result is the same memory, not a second copy beside it. import tools create notes only;
 * this is the path that brings back the ledger with its history.
 *
 * It replays the memory's own operations with the times and ids the export recorded: each fact
 * is saved again at its original recorded time, oldest first, so superseding links every value
 * to its successor exactly as before; each entry is appended to its day log at its own time;
 * retired items are retired at their original retire time. Notes are written to their paths
 * with their original modification time and indexed by the vault's indexer. What is not
 * reproduced: an entry's `edited_at` (its edited text is restored as the text), and internal
 * record ids of note files (a note's id is its path).
 */
export async function importExport(store: Store, vault: VaultService, document: string, redaction: Redaction = new Redaction()): Promise<Refusal | object> {
  const parsed = parseDocument(document);
  if ('problem' in parsed) return refuse(`not a renor-export/v1 document: ${parsed.problem}. Nothing was restored.`);
  const db = store.db;
  const held = Number(queryScalar(db, 'SELECT (SELECT count(*) FROM facts) + (SELECT count(*) FROM notes) + (SELECT count(*) FROM vault_files)') ?? 0);
  if (held > 0 || listVaultFiles(vault.root).length > 0) {
    return refuse(`restore goes into an empty store only, and this one already holds ${held} facts, entries or files. Use a fresh RECOLLECT_HOME. Nothing was restored.`);
  }
  const problem = validate(parsed.items);
  if (problem) return refuse(`${problem}. Nothing was restored.`);
  const facts = parsed.items.filter((i) => i.kind === 'fact').sort(byTime('recorded_at'));
  const entries = parsed.items.filter((i) => i.kind === 'entry').sort(byTime('created_at'));
  const notes = parsed.items.filter((i) => i.kind === 'note');
  // An export written before redaction may hold secrets: facts and entries are journaled from it
  // directly, so they are redacted here; notes are files, redacted when they are indexed.
  for (const f of facts) Object.assign(f.meta, await redaction.value({ subject: f.meta.subject, predicate: f.meta.predicate, object: f.meta.object, statement: f.meta.statement }, str(f.meta.scope)));
  for (const e of entries) e.meta.text = await redaction.text(str(e.meta.text), str(e.meta.scope));

  for (const f of facts) {
    const m = f.meta;
    await store.commit(() => {
      const op: FactSaved = {
        op: 'memory.fact.saved', at: num(m.recorded_at), id: str(m.id), subject: str(m.subject), predicate: str(m.predicate), object: str(m.object),
        scope: str(m.scope), source: str(m.source), statement: m.statement === null ? null : str(m.statement), cites: strings(m.cites), validFrom: num(m.valid_from ?? m.recorded_at),
      };
      return { op, result: undefined };
    });
  }
  for (const e of entries) {
    const m = e.meta;
    await store.commit((d) => {
      const at = num(m.created_at);
      const block = { anchor: anchorOfId(str(m.id)), at, timezone: m.timezone === null ? null : str(m.timezone), source: str(m.source), text: str(m.text) };
      const { file, undo } = appendEntryFile(d, vault.root, str(m.path), str(m.day), block);
      const op: NoteAdded = {
        op: 'memory.note.added', at, id: str(m.id), path: str(m.path), day: str(m.day), text: str(m.text), scope: str(m.scope), source: str(m.source),
        timezone: block.timezone, cites: strings(m.cites), factId: m.fact_id === null ? null : str(m.fact_id), file,
      };
      return { op, result: undefined, undo };
    });
  }
  for (const f of facts.filter(isRetired)) {
    await store.commit(() => ({ op: { op: 'memory.retired', at: num(f.meta.retired_at), id: `fact:${str(f.meta.id)}` } satisfies MemoryRetired, result: undefined }));
  }
  for (const e of entries.filter(isRetired)) {
    const path = str(e.meta.path);
    await store.commit((d) => {
      const { stat } = removeEntryFile(d, vault.root, path, anchorOfId(str(e.meta.id)));
      return { op: { op: 'memory.retired', at: num(e.meta.retired_at), id: str(e.meta.id), daily: { path, stat } } satisfies MemoryRetired, result: undefined };
    });
  }
  // Retired notes first, oldest retirement first: a path can hold retired notes and then a live one.
  for (const n of notes.filter(isRetired).sort(byTime('retired_at'))) {
    const path = str(n.meta.path);
    writeNote(vault, path, n);
    await vault.indexPaths([path]);
    await store.commit((d) => {
      const rec = queryRows(d, "SELECT id FROM vault_files WHERE path = ? AND retired_at IS NULL AND kind != 'daily'", [path])[0];
      fs.rmSync(absolutePath(vault.root, path), { force: true });
      if (!rec) return { result: undefined };
      return { op: { op: 'memory.retired', at: num(n.meta.retired_at), id: `note:${path}`, fileId: String(rec.id) } satisfies MemoryRetired, result: undefined };
    });
  }
  const live = notes.filter((n) => !isRetired(n));
  for (const n of live) writeNote(vault, str(n.meta.path), n);
  const tally = await vault.indexPaths(live.map((n) => str(n.meta.path)));
  vault.monitor.invalidate();
  return {
    ok: true as const,
    restored: {
      facts: facts.length,
      superseded_facts: facts.filter((f) => f.meta.superseded_at !== null).length,
      entries: entries.length,
      notes: notes.length,
      retired: { facts: facts.filter(isRetired).length, entries: entries.filter(isRetired).length, notes: notes.filter(isRetired).length },
    },
    indexed_chunks: tally.chunks,
    not_reproduced: ['entry edited_at times', 'internal note record ids (a note is known by its path)'],
  };
}

function writeNote(vault: VaultService, path: string, n: ParsedItem): void {
  const abs = absolutePath(vault.root, path);
  writeFileSynced(abs, n.body ?? '', true);
  // The note's own date falls back to its file time, so the original time is put back.
  const mtime = Number(n.meta.mtime_ms);
  if (Number.isFinite(mtime)) fs.utimesSync(abs, mtime / 1000, mtime / 1000);
}

function validate(items: ParsedItem[]): string | undefined {
  const need: Record<ParsedItem['kind'], string[]> = {
    fact: ['id', 'subject', 'predicate', 'object', 'scope', 'source', 'recorded_at'],
    entry: ['id', 'path', 'day', 'text', 'scope', 'source', 'created_at'],
    note: ['id', 'path'],
  };
  const notePaths = new Set<string>();
  for (const item of items) {
    const missing = need[item.kind].filter((k) => item.meta[k] === undefined || item.meta[k] === null);
    if (missing.length) return `${item.kind} ${item.id} lacks ${missing.join(', ')}`;
    if (item.kind !== 'fact') {
      const place = classifyPath(str(item.meta.path));
      if ('problem' in place) return `${item.kind} ${item.id}: ${place.problem}`;
    }
    if (item.kind === 'note' && !isRetired(item)) {
      const p = str(item.meta.path);
      if (notePaths.has(p)) return `two live notes at ${p}`;
      notePaths.add(p);
    }
  }
  return undefined;
}

function isRetired(i: ParsedItem): boolean {
  return i.meta.retired_at !== null && i.meta.retired_at !== undefined;
}

function byTime(key: string): (a: ParsedItem, b: ParsedItem) => number {
  return (a, b) => num(a.meta[key]) - num(b.meta[key]) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function num(v: unknown): number {
  return Number(v);
}

function str(v: unknown): string {
  return String(v);
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}
