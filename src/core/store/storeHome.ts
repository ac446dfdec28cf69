import * as fs from 'node:fs';
import * as path from 'node:path';
import { FILE_MODE, FOLDER_MODE, folderWritable } from './fileWrites';
import { READ_ONLY_CODES } from './journalLive';
import { VAULT_FOLDER } from '../memory/vault/vaultLayout';

/** A store path that cannot hold a store, said as what is wrong and what to do. */
export class StorePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorePathError';
  }
}

const MOVE_OR_POINT = 'point RECOLLECT_HOME (or the recollect.storePath setting) at a folder, or move the file away';

/**
 * Makes sure `home` is a folder the store can use, creating it (0700) when it is missing, and
 * says whether this process may write there. A path that is a file, or lies under one, is
 * refused with a sentence instead of EEXIST or ENOTDIR. A read-only folder that already holds a
 * store opens for reading; one that does not is refused, since there is nothing to read.
 */
export function prepareHome(home: string, journalName: string): { writable: boolean } {
  const existing = statOrUndefined(home);
  if (existing && !existing.isDirectory()) throw new StorePathError(`the store path ${home} is a file, not a folder: ${MOVE_OR_POINT}.`);
  if (!existing) {
    const blocker = fileAbove(home);
    if (blocker) throw new StorePathError(`the store path ${home} lies under ${blocker}, which is a file, not a folder: ${MOVE_OR_POINT}.`);
    try {
      fs.mkdirSync(path.dirname(home), { recursive: true });
      fs.mkdirSync(home, { mode: FOLDER_MODE });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code !== 'EEXIST') {
        if (READ_ONLY_CODES.has(code)) throw new StorePathError(`the store folder ${home} cannot be created: ${code === 'EROFS' ? 'its disk is read-only' : 'this user may not write there'}. Point RECOLLECT_HOME (or the recollect.storePath setting) at a writable folder.`);
        throw err;
      }
    }
  }
  const writable = folderWritable(home);
  if (!writable && !fs.existsSync(path.join(home, journalName))) {
    throw new StorePathError(`the store folder ${home} is read-only and holds no store yet, so there is nothing to read and nothing can be saved. Make it writable, or point RECOLLECT_HOME (or the recollect.storePath setting) at a writable folder.`);
  }
  if (writable) tighten(home);
  return { writable };
}

/**
 * Existing stores were made 0755 with 0644 files. The home is made 0700 (which alone keeps
 * everyone else out of everything in it) and, once, when it was found open to others, every
 * file the store wrote in it is made 0600 and every folder 0700. The vault's files are a
 * person's own notes and keep the rights they have. An already tight home costs one stat.
 */
function tighten(home: string): void {
  const st = fs.statSync(home);
  if ((st.mode & 0o077) === 0) return;
  walk(home, true);
  chmodQuietly(home, FOLDER_MODE);
}

function walk(dir: string, top: boolean, inVault = false): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue; // never follow a link out of the store
    if (entry.isDirectory()) {
      chmodQuietly(full, FOLDER_MODE);
      walk(full, false, inVault || (top && entry.name === VAULT_FOLDER));
    } else if (entry.isFile() && !inVault) chmodQuietly(full, FILE_MODE);
  }
}

function chmodQuietly(file: string, mode: number): void {
  try {
    const st = fs.statSync(file);
    if ((st.mode & 0o777 & ~mode) !== 0) fs.chmodSync(file, (st.mode & 0o777) & mode);
  } catch {
    // Removed meanwhile, or not ours to change: the home's own 0700 still keeps others out.
  }
}

/** The nearest existing ancestor of `p` when it is a file. */
function fileAbove(p: string): string | undefined {
  for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
    const st = statOrUndefined(dir);
    if (st) return st.isDirectory() ? undefined : dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}
