import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { asRefusedWrite, FILE_MODE, removeQuietly, writeFully } from './fileWrites';

/**
 * Replaces `file` with `data` so that a crash leaves either the old file or the whole new one:
 * write a temp file beside it, sync it, rename it over, and sync the folder so the rename holds.
 * The rename happens only once every byte was written and synced; on any failure before it the
 * temp file is removed and `file` is untouched (a full disk becomes a WriteRefusedError).
 */
export function replaceFileDurably(file: string, data: Uint8Array | string): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const tmp = writeTempBeside(file, bytes);
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    removeQuietly(tmp);
    throw asRefusedWrite(err, file, bytes.length);
  }
  syncFolder(path.dirname(file));
}

/** A whole, synced temp file beside `file` holding `bytes`, its path returned; on any failure nothing is left and the write is refused. */
export function writeTempBeside(file: string, bytes: Uint8Array): string {
  const tmp = tempBeside(file);
  try {
    const fd = fs.openSync(tmp, 'wx', FILE_MODE);
    try {
      writeFully(fd, bytes);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    removeQuietly(tmp);
    throw asRefusedWrite(err, file, bytes.length);
  }
  return tmp;
}

/** A temp name beside `file` that names its process, so the next open can tell a dead writer's leftovers (strayTemps.ts). */
export function tempBeside(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

export function syncFolder(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some platforms (Windows) cannot open a folder for sync; the rename is still atomic there.
  }
}
