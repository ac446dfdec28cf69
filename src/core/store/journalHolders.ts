import * as fs from 'node:fs';
import * as path from 'node:path';
import { FILE_MODE } from './fileWrites';
import { READ_ONLY_CODES } from './journalLive';

/**
 * Some journal changes break processes of EARLIER builds still running across an upgrade (an MCP
 * server a coding agent started before it):
 * - sealing renames a new journal.jsonl over the old one; a process of this build notices (it
 *   compares inodes) and follows, an earlier one would go on appending to the replaced file and
 *   every write it acknowledged would be lost;
 * - an operation it does not know is skipped, and its next checkpoint would cover that line
 *   without its effect, hiding it from every process that opens the checkpoint later.
 * So every process holds one marker file open per such feature it understands, for as long as it
 * holds the journal, and a process uses a feature only when no other process holds the journal
 * without that feature's marker. Processes are seen through Linux's /proc; where it is missing the
 * check cannot be made and the features stay off (safe: a larger journal, one import line per file).
 */
export const READER_MARKERS = {
  seals: 'journal.follows-seals',
  importBatches: 'journal.reads-import-batches',
} as const;
export type JournalFeature = keyof typeof READER_MARKERS;

export const FOLLOWER_MARKER = READER_MARKERS.seals;

/** Whether this system shows other processes' open files, without which a journal is never sealed. */
export function sealingPossible(procRoot = '/proc'): boolean {
  try {
    return fs.readdirSync(path.join(procRoot, 'self', 'fd')).length > 0;
  } catch {
    return false;
  }
}

/**
 * Opens (creating) every feature's marker beside `journalPath`; the caller keeps the descriptors
 * until it closes the journal. In a read-only folder a missing marker cannot be made: this
 * process then reads without it, which only makes writers elsewhere hold back those features.
 */
export function holdReaderMarkers(journalPath: string): number[] {
  return Object.values(READER_MARKERS).flatMap((name) => {
    const file = path.join(path.dirname(journalPath), name);
    try {
      return [fs.openSync(file, 'a', FILE_MODE)];
    } catch (err) {
      if (!READ_ONLY_CODES.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      try {
        return [fs.openSync(file, 'r')];
      } catch {
        return [];
      }
    }
  });
}

/** The other processes holding `journalPath` without `feature`'s marker; undefined when /proc cannot tell. */
export function holdersUnaware(journalPath: string, feature: JournalFeature, procRoot = '/proc'): number[] | undefined {
  const journal = realpathOrSelf(journalPath);
  const marker = realpathOrSelf(path.join(path.dirname(journalPath), READER_MARKERS[feature]));
  let pids: string[];
  try {
    pids = fs.readdirSync(procRoot).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const unaware: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    const held = openPaths(path.join(procRoot, pid, 'fd'));
    if (held.has(journal) && !held.has(marker)) unaware.push(Number(pid));
  }
  return unaware;
}

export type SealSafety = { safe: true } | { safe: false; reason: string };

/** Whether every other process holding `journalPath` open also follows seals (see above). */
export function sealSafety(journalPath: string, procRoot = '/proc'): SealSafety {
  const unaware = holdersUnaware(journalPath, 'seals', procRoot);
  if (unaware === undefined) return { safe: false, reason: `${procRoot} cannot be read on this system, so processes of earlier builds holding the journal cannot be ruled out` };
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
