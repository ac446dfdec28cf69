import * as fs from 'node:fs/promises';
import * as path from 'node:path';

// No `vscode` here: measured in unit tests on real folders.

/** A store with more files than this is reported as "at least" its size: the status bar must stay cheap. */
const FILES_MAX = 200_000;

export interface DiskSize {
  bytes: number;
  files: number;
  /** The walk stopped at FILES_MAX; the true size is larger. */
  partial: boolean;
}

/** Bytes on disk under the store home (journal, snapshot, blobs, vault), walked without blocking. */
export async function storeSizeOnDisk(home: string): Promise<DiskSize> {
  const size: DiskSize = { bytes: 0, files: 0, partial: false };
  const walk = async (dir: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return; // removed while walking, or not readable: it holds nothing we can count
    }
    for (const e of entries) {
      if (size.files >= FILES_MAX) {
        size.partial = true;
        return;
      }
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        size.files++;
        size.bytes += await fs.stat(p).then((s) => s.size, () => 0);
      }
    }
  };
  await walk(home);
  return size;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${u === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[u]}`;
}
