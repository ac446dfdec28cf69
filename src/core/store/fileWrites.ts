import * as fs from 'node:fs';
import * as path from 'node:path';
import { WriteRefusedError } from './errors';

/** Every file the store creates is its owner's alone, in a home only its owner may enter. */
export const FILE_MODE = 0o600;
export const FOLDER_MODE = 0o700;

/**
 * Writes all of `data` at the descriptor's position. `fs.writeSync` may write fewer bytes than
 * asked (a disk that fills mid-write stores what fits and says so by its count), so it loops;
 * a write that stores nothing is a full disk even where the system did not say ENOSPC.
 */
export function writeFully(fd: number, data: Uint8Array): void {
  for (let at = 0; at < data.length; ) {
    const n = fs.writeSync(fd, data, at, data.length - at);
    if (n <= 0) throw Object.assign(new Error(`ENOSPC: no space left on device, write stored ${at} of ${data.length} bytes`), { code: 'ENOSPC' });
    at += n;
  }
}

/**
 * Reads into all of `into` from offset `at`; `fs.readSync` may return fewer bytes than asked, so
 * it loops. Returns how many it read: fewer than `into` holds only where the file ends first.
 */
export function readFully(fd: number, into: Uint8Array, at: number): number {
  let done = 0;
  while (done < into.byteLength) {
    const n = fs.readSync(fd, into, done, into.byteLength - done, at + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** Bytes an unprivileged writer may still use on the disk holding `file` (its folder when it does not exist yet). */
export function bytesFree(file: string): number | undefined {
  for (let p = path.resolve(file); ; p = path.dirname(p)) {
    try {
      const st = fs.statfsSync(p);
      return st.bavail * st.bsize;
    } catch {
      if (path.dirname(p) === p) return undefined;
    }
  }
}

/**
 * The refusal a failed write of `needed` bytes to `file` becomes, when the cause is one a person
 * can act on (a full disk, a read-only folder); undefined for anything else, which stays an error.
 */
export function refusedWrite(err: unknown, file: string, needed: number): WriteRefusedError | undefined {
  if (err instanceof WriteRefusedError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    const free = bytesFree(file) ?? 0;
    // A failed sync knows no byte count of its own: the file is named without one.
    const what = needed > 0 ? `${needed} bytes could not be written to ${file}` : `${file} could not be written`;
    const problem = `the disk is full: ${what} (${free} bytes free on that disk)`;
    const reason = `${problem}. Nothing was saved; free some space on the disk and try again.`;
    return needed > 0 ? new WriteRefusedError(problem, reason, { limit: free, used: needed, unit: 'bytes' }) : new WriteRefusedError(problem, reason);
  }
  if (code === 'EROFS') return readOnlyStore(path.dirname(file), code);
  // EACCES and EPERM also mean a file held open elsewhere (a rename on Windows): read-only only if the folder says so.
  if ((code === 'EACCES' || code === 'EPERM') && !folderWritable(path.dirname(file))) return readOnlyStore(path.dirname(file), code);
  return undefined;
}

/** Whether this process may create files in `dir` (access() sees a read-only mount and a missing permission alike). */
export function folderWritable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** `refusedWrite` when it applies, else the error as it was. */
export function asRefusedWrite(err: unknown, file: string, needed: number): unknown {
  return refusedWrite(err, file, needed) ?? err;
}

export function readOnlyStore(folder: string, code: string): WriteRefusedError {
  const problem = `the store folder ${folder} ${code === 'EROFS' ? 'is on a read-only disk' : 'may not be written by this user'}`;
  return new WriteRefusedError(
    problem,
    `${problem}: memory can be read but nothing can be saved. Make the folder writable (or point RECOLLECT_HOME / recollect.storePath at a writable folder) and try again.`,
  );
}

/** Removes a temp file a failed write left; a failure to remove it is not the caller's error. */
export function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Left for the next open's sweep of dead processes' temp files (strayTemps.ts).
  }
}
