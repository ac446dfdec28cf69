import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { asRefusedWrite, FILE_MODE, FOLDER_MODE, removeQuietly, writeFully } from '../../store/fileWrites';
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

/**
 * Writes a whole file atomically (temp, sync, rename). With `noClobber`, refuses to replace an
 * existing file. A new file is its owner's alone (0600); a file being replaced keeps the rights
 * it had, since a person may have given their notes other ones. Nothing is renamed or linked
 * unless every byte was written and synced; on failure the temp file is removed.
 */
export function writeFileSynced(abs: string, content: string, noClobber = false): FileStat {
  fs.mkdirSync(path.dirname(abs), { recursive: true, mode: FOLDER_MODE });
  const tmp = path.join(path.dirname(abs), `.${path.basename(abs)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const bytes = Buffer.from(content, 'utf8');
  const mode = modeOf(abs) ?? FILE_MODE;
  let st: fs.Stats;
  try {
    const fd = fs.openSync(tmp, 'wx', mode);
    try {
      if (mode !== FILE_MODE) fs.fchmodSync(fd, mode); // the umask would narrow what the person chose
      writeFully(fd, bytes);
      fs.fsyncSync(fd);
      st = fs.fstatSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    removeQuietly(tmp);
    throw asRefusedWrite(err, abs, bytes.length);
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

function modeOf(abs: string): number | undefined {
  try {
    return fs.statSync(abs).mode & 0o777;
  } catch {
    return undefined;
  }
}

/**
 * Appends to a day log. A write that stores only part of the text (a full disk) is cut back, so
 * the log never ends in half an entry, and refused.
 */
function appendText(abs: string, text: string): { size: number; mtimeMs: number; before: number } {
  const fd = fs.openSync(abs, 'a+', FILE_MODE);
  try {
    const before = fs.fstatSync(fd).size;
    let prefix = '';
    if (before > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, before - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    const bytes = Buffer.from(prefix + text, 'utf8');
    try {
      writeFully(fd, bytes);
    } catch (err) {
      try {
        fs.ftruncateSync(fd, before);
      } catch {
        // A torn entry stays; index_memory reads it as a person's edit.
      }
      throw asRefusedWrite(err, abs, bytes.length);
    }
    const st = fs.fstatSync(fd);
    return { size: st.size, mtimeMs: st.mtimeMs, before };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Takes back a write to a day log whose journal line could not be written, if the file is still
 * exactly as that write left it (a person's edit since is left alone): cut back to its old
 * length, or removed when the write created it.
 */
function undoWrite(abs: string, left: { size: number; mtimeMs: number }, before: number | undefined): void {
  const now = fileStatOf(abs);
  if (!now || now.size !== left.size || now.mtimeMs !== left.mtimeMs) return;
  if (before === undefined) fs.rmSync(abs, { force: true });
  else fs.truncateSync(abs, before);
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
 * Adds one entry to its day log. `file` is the file's new stat when the record may follow it (the
 * file was clean, or is new), null when a person's unindexed edit is in it; `undo` takes the
 * write back when its journal line cannot be written (Decision.undo).
 */
export function appendEntryFile(db: Database, root: string, rel: string, day: string, entry: EntryBlock): { file: FileStat | null; undo: () => void } {
  const abs = absolutePath(root, rel);
  const st = fileStatOf(abs);
  if (!st) {
    // No file yet: write every entry the store has for the day (a store from before the vault
    // had none), unless a person deleted it — then only the new entry, and the deletion stays
    // for index_memory to read.
    const deleted = recordAt(db, rel) !== undefined;
    const content = deleted ? renderTitle(day) + renderEntry(entry) : renderDailyFile(day, [...entryBlocksOf(db, rel), entry]);
    const written = writeFileSynced(abs, content);
    return { file: deleted ? null : written, undo: () => undoWrite(abs, written, undefined) };
  }
  const clean = isClean(db, root, rel);
  const after = appendText(abs, renderEntry(entry));
  return { file: clean ? { size: after.size, mtimeMs: after.mtimeMs, hash: null } : null, undo: () => undoWrite(abs, after, after.before) };
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
