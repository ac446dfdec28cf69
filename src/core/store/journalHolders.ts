import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Sealing renames a new journal.jsonl over the old one. A process of this build notices (it
 * compares inodes) and follows; a process of an EARLIER build, still running across an upgrade
 * (an MCP server a coding agent started before it), would go on appending to the replaced file
 * and every write it acknowledged would be lost. So every process of this build holds a marker
 * file open for as long as it holds the journal, and a seal goes ahead only when no other process
 * holds the journal without the marker. Processes are seen through Linux's /proc; where it is
 * missing the check cannot be made and the journal is left unsealed (safe, just larger).
 */
export const FOLLOWER_MARKER = 'journal.follows-seals';

/** Whether this system shows other processes' open files, without which a journal is never sealed. */
export function sealingPossible(procRoot = '/proc'): boolean {
  try {
    return fs.readdirSync(path.join(procRoot, 'self', 'fd')).length > 0;
  } catch {
    return false;
  }
}

/** Opens (creating) the marker beside `journalPath`; the caller keeps the descriptor until it closes the journal. */
export function holdFollowerMarker(journalPath: string): number {
  return fs.openSync(path.join(path.dirname(journalPath), FOLLOWER_MARKER), 'a');
}

export type SealSafety = { safe: true } | { safe: false; reason: string };

/** Whether every other process holding `journalPath` open also holds the marker (see above). */
export function sealSafety(journalPath: string, procRoot = '/proc'): SealSafety {
  const journal = realpathOrSelf(journalPath);
  const marker = realpathOrSelf(path.join(path.dirname(journalPath), FOLLOWER_MARKER));
  let pids: string[];
  try {
    pids = fs.readdirSync(procRoot).filter((name) => /^\d+$/.test(name));
  } catch {
    return { safe: false, reason: `${procRoot} cannot be read on this system, so processes of earlier builds holding the journal cannot be ruled out` };
  }
  const unaware: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    const held = openPaths(path.join(procRoot, pid, 'fd'));
    if (held.has(journal) && !held.has(marker)) unaware.push(Number(pid));
  }
  if (unaware.length === 0) return { safe: true };
  return { safe: false, reason: `process${unaware.length > 1 ? 'es' : ''} ${unaware.join(', ')} hold${unaware.length > 1 ? '' : 's'} the journal without following seals (an earlier build); sealing waits until ${unaware.length > 1 ? 'they exit' : 'it exits'}` };
}

/** The files a process holds open; empty for a process we may not inspect or that just exited. */
function openPaths(fdDir: string): Set<string> {
  const out = new Set<string>();
  let fds: string[];
  try {
    fds = fs.readdirSync(fdDir);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      out.add(fs.readlinkSync(path.join(fdDir, fd)));
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

function realpathOrSelf(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
