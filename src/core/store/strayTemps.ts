import * as fs from 'node:fs';
import * as path from 'node:path';
import { processAlive } from './processAlive';

/**
 * Temp files name the process that writes them (`<file>.tmp-<pid>-…`, durableFile.ts, and the
 * compaction's `store.sqlite.tmp-<pid>-compact`). One whose process is gone was left by a crash,
 * a kill -9 or a compaction child that died with its owner, and may be as large as the snapshot:
 * opening a store removes them. A live process's are left alone, this process's too.
 */
const TEMP = /\.tmp-(\d+)(?:-[0-9a-z]+)?$/;

export function removeDeadTemps(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(TEMP.exec(name)?.[1] ?? NaN);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    try {
      fs.rmSync(path.join(dir, name), { force: true });
    } catch {
      // A read-only store keeps them until it can be written.
    }
  }
}
