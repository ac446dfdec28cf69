import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { queryRows, type Database } from '../../store/sqlite';
import { insertEntry, removeEntry, renderDailyFile, renderEntry, renderTitle, type EntryBlock } from './dailyFile';
import { absolutePath } from './vaultLayout';
import type { FileStat } from './vaultSchema';
import { recordAt, sha256 } from './vaultState';

/**
 * File writes the memory makes to its own vault. They run inside `Store.commit`'s decide, under
 * the cross-process lock, so two processes never interleave writes to one day's log and the
 * operation can record the file's resulting stat. The journal line is the durable record; an
 * append to a day log is not synced on its own (that would double the cost of every save), so
 * after a power cut a log can miss its newest entries. index_memory tells that apart from a
 * person's deletion by time: a block a person deleted leaves the file modified after the entry
 * was written, a lost append leaves it older, and lost entries are written back, not retired.
 * Whole-file writes (new logs, rewrites, restores) are rare and are synced.
 *
 * A file a person has edited since the last index is never rewritten wholesale: entries are
 * appended to it, and the record is left as it was, so the edit stays visible as `stale` until
 * index_memory reads it.
 */

export function fileStatOf(abs: string): { size: number; mtimeMs: number } | undefined {
  try {
    const st = fs.statSync(abs);
    return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

/** Is the file exactly what the index last recorded? */
export function isClean(db: Database, root: string, rel: string): boolean {
  const rec = recordAt(db, rel);
  const st = fileStatOf(absolutePath(root, rel));
  if (!rec || !st) return false;
  if (rec.size === st.size && rec.mtimeMs === st.mtimeMs) return true;
  return rec.hash !== null && rec.hash === sha256(fs.readFileSync(absolutePath(root, rel)));
}

/** Writes a whole file atomically (temp, sync, rename). With `noClobber`, refuses to replace an existing file. */
export function writeFileSynced(abs: string, content: string, noClobber = false): FileStat {
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  const tmp = path.join(path.dirname(abs), `.${path.basename(abs)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx');
  let st: fs.Stats;
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
    st = fs.fstatSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    // link() fails with EEXIST instead of replacing: the no-overwrite promise holds even if a
    // file appeared after the caller looked.
    if (noClobber) {
      try {
        fs.linkSync(tmp, abs);
      } catch (err) {
        // Some file systems have no hard links; an exclusive copy keeps the same promise.
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw err;
        fs.copyFileSync(tmp, abs, fs.constants.COPYFILE_EXCL);
        const copied = fs.statSync(abs);
        fs.unlinkSync(tmp);
        return { size: copied.size, mtimeMs: copied.mtimeMs, hash: sha256(content) };
      }
      fs.unlinkSync(tmp);
    } else fs.renameSync(tmp, abs);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { size: st.size, mtimeMs: st.mtimeMs, hash: sha256(content) };
}

function appendText(abs: string, text: string): { size: number; mtimeMs: number } {
  const fd = fs.openSync(abs, 'a+');
  try {
    const before = fs.fstatSync(fd).size;
    let prefix = '';
    if (before > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, before - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    fs.writeSync(fd, prefix + text);
    const st = fs.fstatSync(fd);
    return { size: st.size, mtimeMs: st.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

/** The live entries of one day log, oldest first, as the file shows them. */
export function entryBlocksOf(db: Database, rel: string): (EntryBlock & { id: string })[] {
  return queryRows(db, 'SELECT id, text, created_at, timezone, source FROM notes WHERE path = ? AND retired_at IS NULL ORDER BY created_at, id', [rel]).map((r) => ({
    id: String(r.id),
    anchor: String(r.id).slice(String(r.id).lastIndexOf('#') + 1),
    at: Number(r.created_at),
    timezone: r.timezone === null ? null : String(r.timezone),
    source: String(r.source),
    text: String(r.text),
  }));
}

/**
 * Adds one entry to its day log. Returns the file's new stat when the record may follow it (the
 * file was clean, or is new), null when a person's unindexed edit is in it.
 */
export function appendEntryFile(db: Database, root: string, rel: string, day: string, entry: EntryBlock): FileStat | null {
  const abs = absolutePath(root, rel);
  const st = fileStatOf(abs);
  if (!st) {
    // No file yet: write every entry the store has for the day (a store from before the vault
    // had none), unless a person deleted it — then only the new entry, and the deletion stays
    // for index_memory to read.
    const deleted = recordAt(db, rel) !== undefined;
    const content = deleted ? renderTitle(day) + renderEntry(entry) : renderDailyFile(day, [...entryBlocksOf(db, rel), entry]);
    const written = writeFileSynced(abs, content);
    return deleted ? null : written;
  }
  const clean = isClean(db, root, rel);
  const after = appendText(abs, renderEntry(entry));
  return clean ? { ...after, hash: null } : null;
}

/** Takes one entry's block out of its day log. `found` is false when the block is not in the file. */
export function removeEntryFile(db: Database, root: string, rel: string, anchor: string): { found: boolean; stat: FileStat | null } {
  const abs = absolutePath(root, rel);
  if (!fileStatOf(abs)) return { found: false, stat: null };
  const clean = isClean(db, root, rel);
  const next = removeEntry(fs.readFileSync(abs, 'utf8'), anchor);
  if (next === undefined) return { found: false, stat: null };
  const stat = writeFileSynced(abs, next);
  return { found: true, stat: clean ? stat : null };
}

/** Puts one entry's block back, before the first later entry still in the file. */
export function insertEntryFile(db: Database, root: string, rel: string, day: string, entry: EntryBlock): FileStat | null {
  const abs = absolutePath(root, rel);
  if (!fileStatOf(abs)) return writeFileSynced(abs, renderTitle(day) + renderEntry(entry));
  const clean = isClean(db, root, rel);
  const content = fs.readFileSync(abs, 'utf8');
  const later = entryBlocksOf(db, rel).find((e) => e.at > entry.at || (e.at === entry.at && e.anchor > entry.anchor));
  const stat = writeFileSynced(abs, insertEntry(content, renderEntry(entry), later?.anchor ?? null));
  return clean ? stat : null;
}
