import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { newId } from '../../ids';
import { queryRows, type Database } from '../../store/sqlite';
import { chunkNote } from './chunking';
import { handWrittenText, parseDailyFile, renderDailyFile, renderEntry, renderTitle, sameText, withAnchors } from './dailyFile';
import { inlineTags, noteTitle, parseFrontMatter } from './frontMatter';
import { dailyRecordId } from './indexRows';
import { absolutePath, classifyPath, type VaultPlace } from './vaultLayout';
import type { AddedEntry, IndexedFile, VaultIndexed } from './vaultSchema';
import { recordAt, sha256, type VaultChange } from './vaultState';
import { entryBlocksOf, fileStatOf, writeFileSynced } from './vaultWriter';

/** A note larger than this is recorded but not indexed (and reported): one journal line must stay reasonable. */
export const NOTE_MAX_BYTES = 2 * 1024 * 1024;
/** Who wrote an entry a person typed into a day log by hand. */
export const HAND_SOURCE = 'vault';

export interface IndexTally {
  files: { added: number; modified: number; deleted: number; rendered: number; touched: number };
  entries: { added: number; edited: number; removed: number; restored: number; rewritten: number };
  chunks: number;
  skipped: { path: string; reason: string }[];
}

export function emptyTally(): IndexTally {
  return { files: { added: 0, modified: 0, deleted: 0, rendered: 0, touched: 0 }, entries: { added: 0, edited: 0, removed: 0, restored: 0, rewritten: 0 }, chunks: 0, skipped: [] };
}

/**
 * Reads the changed vault files and decides the one operation that brings the index in line
 * with them. Runs under the store lock (inside `commit`), rechecking each file against the
 * latest records, so a file another process indexed meanwhile is left alone. Writes a file only
 * to give hand-written day-log entries their anchors, or to render a day log the store has
 * entries for but no file.
 */
export function decideIndex(db: Database, root: string, changes: readonly VaultChange[], at: number, tally: IndexTally): VaultIndexed | undefined {
  const op: VaultIndexed = { op: 'memory.vault.indexed', at, files: [], removedFiles: [], entriesAdded: [], entriesEdited: [], entriesRemoved: [], entriesBack: [] };
  for (const change of changes) {
    const place = classifyPath(change.path);
    if ('problem' in place) {
      tally.skipped.push({ path: change.path, reason: place.problem });
      continue;
    }
    const abs = absolutePath(root, change.path);
    const st = fileStatOf(abs);
    const rec = recordAt(db, change.path);
    if (!st) {
      if (rec) removeRecord(db, op, rec.id, change.path, place, tally);
      else if (place.kind === 'daily') renderMissingDaily(db, root, op, change.path, place, tally);
      continue;
    }
    if (rec && rec.size === st.size && rec.mtimeMs === st.mtimeMs) continue; // indexed meanwhile
    if (st.size > NOTE_MAX_BYTES) {
      tally.skipped.push({ path: change.path, reason: `${st.size} bytes, over the ${NOTE_MAX_BYTES}-byte limit for one note; split it to index it` });
      op.files.push({ id: rec?.id ?? fileId(at, change.path), path: change.path, scope: place.scope, kind: place.kind, stat: { ...st, hash: null }, skipped: 'too large' });
      continue;
    }
    const content = fs.readFileSync(abs, 'utf8');
    const hash = sha256(content);
    if (rec && rec.hash === hash) {
      tally.files.touched++;
      op.files.push({ id: rec.id, path: change.path, scope: place.scope, kind: place.kind, stat: { ...st, hash } });
      continue;
    }
    if (rec) tally.files.modified++;
    else tally.files.added++;
    if (place.kind === 'daily') indexDaily(db, root, op, change.path, place, content, { ...st, hash }, tally);
    else indexNote(op, rec?.id ?? fileId(at, change.path), change.path, place, content, { ...st, hash }, tally);
  }
  const changed = op.files.length + op.removedFiles.length + op.entriesAdded.length + op.entriesEdited.length + op.entriesRemoved.length + op.entriesBack.length;
  return changed ? op : undefined;
}

function fileId(at: number, path: string): string {
  return `${newId(at)}-${createHash('sha256').update(path).digest('hex').slice(0, 6)}`;
}

function removeRecord(db: Database, op: VaultIndexed, id: string, path: string, place: VaultPlace, tally: IndexTally): void {
  tally.files.deleted++;
  op.removedFiles.push(id);
  if (place.kind !== 'daily') return;
  // A day log deleted by hand takes its entries out of recall with it (each one restorable).
  for (const e of entryBlocksOf(db, path)) {
    op.entriesRemoved.push(e.id);
    tally.entries.removed++;
  }
}

function renderMissingDaily(db: Database, root: string, op: VaultIndexed, path: string, place: VaultPlace, tally: IndexTally): void {
  const entries = entryBlocksOf(db, path);
  if (!entries.length) return;
  const stat = writeFileSynced(absolutePath(root, path), renderDailyFile(place.day as string, entries));
  op.files.push({ id: dailyRecordId(path), path, scope: place.scope, kind: 'daily', stat });
  tally.files.rendered++;
}

function indexNote(op: VaultIndexed, id: string, path: string, place: VaultPlace, content: string, stat: IndexedFile['stat'], tally: IndexTally): void {
  const fm = parseFrontMatter(content);
  const chunks = chunkNote(content);
  // A date a note claims for itself cannot be later than the file was written.
  const noteDate = fm.date !== undefined ? Math.min(fm.date, Math.floor(stat.mtimeMs)) : Math.floor(stat.mtimeMs);
  const tags = [...new Set([...fm.tags.map((t) => t.toLowerCase()), ...inlineTags(content)])];
  op.files.push({
    id, path, scope: place.scope, kind: place.kind, stat,
    content: { title: noteTitle(path, content, fm), aliases: fm.aliases, tags, noteDate, source: fm.source ?? null, chunks },
  });
  tally.chunks += chunks.length;
}

function indexDaily(db: Database, root: string, op: VaultIndexed, path: string, place: VaultPlace, content: string, stat: IndexedFile['stat'], tally: IndexTally): void {
  const day = place.day as string;
  const parsed = parseDailyFile(content);
  const known = new Map(
    queryRows(db, 'SELECT id, text, retired_at, created_at FROM notes WHERE path = ?', [path]).map((r) => [
      String(r.id),
      { text: String(r.text), retired: r.retired_at !== null, at: Number(r.created_at) },
    ]),
  );
  const inFile = new Set<string>();
  const replacements = new Map<number, string>();
  const addHandWritten = (text: string, line: number) => {
    if (!text.trim()) return;
    const anchor = createHash('sha256').update(newId(op.at)).update(text).digest('hex').slice(0, 12);
    const entry: AddedEntry = { id: `entry:${path}#${anchor}`, path, day, text, scope: place.scope, source: HAND_SOURCE, at: op.at };
    op.entriesAdded.push(entry);
    tally.entries.added++;
    inFile.add(entry.id);
    replacements.set(line, renderEntry({ anchor, at: op.at, timezone: null, source: HAND_SOURCE, text }));
  };
  addHandWritten(parsed.preamble.text, -1);
  for (const s of parsed.sections) {
    if (s.anchor === null) {
      addHandWritten(handWrittenText(s), s.startLine);
      continue;
    }
    const id = `entry:${path}#${s.anchor}`;
    if (inFile.has(id)) continue; // the same block pasted twice: the first one is the entry
    inFile.add(id);
    const stored = known.get(id);
    if (!stored) {
      op.entriesAdded.push({ id, path, day, text: s.text, scope: place.scope, source: HAND_SOURCE, at: op.at });
      tally.entries.added++;
      continue;
    }
    if (stored.retired) {
      op.entriesBack.push(id);
      tally.entries.restored++;
    }
    if (!sameText(stored.text, s.text)) {
      op.entriesEdited.push({ id, text: s.text });
      tally.entries.edited++;
    }
  }
  // An entry written after the file last changed cannot have been deleted from it by a person:
  // its append was lost (a power cut before the page cache reached the disk). It goes back in.
  const lost = entryBlocksOf(db, path).filter((e) => !inFile.has(e.id) && e.at > stat.mtimeMs);
  const lostIds = new Set(lost.map((e) => e.id));
  for (const [id, e] of known) {
    if (!e.retired && !inFile.has(id) && !lostIds.has(id)) {
      op.entriesRemoved.push(id);
      tally.entries.removed++;
    }
  }
  tally.entries.rewritten += lost.length;
  let next = replacements.size ? withAnchors(content, renderTitle(day), replacements) : content;
  if (lost.length) next = (next.endsWith('\n') || next === '' ? next : `${next}\n`) + lost.map(renderEntry).join('');
  const finalStat = next !== content ? writeFileSynced(absolutePath(root, path), next) : stat;
  op.files.push({ id: recordAt(db, path)?.id ?? dailyRecordId(path), path, scope: place.scope, kind: 'daily', stat: finalStat });
}
