import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Replaces `file` with `data` so that a crash leaves either the old file or the whole new one:
 * write a temp file beside it, sync it, rename it over, and sync the folder so the rename holds.
 */
export function replaceFileDurably(file: string, data: Uint8Array | string): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncFolder(path.dirname(file));
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
