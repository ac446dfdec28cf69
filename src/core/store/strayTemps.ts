import * as fs from 'node:fs';
import * as path from 'node:path';
import { processAlive } from './processAlive';

/**
 * Temp files name the process that writes them (`<file>.tmp-<pid>-…`, durableFile.ts, and the
 * compaction's `store.sqlite.tmp-<pid>-compact`). One whose process is gone was left by a crash,
 * a kill -9 or a compaction child that died with its owner, and may be as large as the snapshot:
 * opening a store removes them. A live process's are left alone, this process's too; a name
 * that holds two pids (a compaction child's file beside its owner's) is left while both live.
 */
const TEMP = /\.tmp-(\d+)(?:-[0-9a-z]+)?$/;
/** Every pid a temp file's name holds: a compaction child's own temps sit beside its owner's out file (`….tmp-<owner>-compact.tmp-<child>-…`). */
const NAMED_PIDS = /\.tmp-(\d+)/g;

export function removeDeadTemps(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!TEMP.test(name)) continue;
    // Left behind once any process it names is gone: the owner that would have renamed a
    // compaction's file, or the child that was writing it (which, orphaned, may linger unreaped).
    const pids = [...name.matchAll(NAMED_PIDS)].map((m) => Number(m[1]));
    if (pids.every((pid) => pid === process.pid || processAlive(pid))) continue;
    try {
      fs.rmSync(path.join(dir, name), { force: true });
    } catch {
      // A read-only store keeps them until it can be written.
    }
  }
}
