import type { DatabaseFile } from './databaseFile';
import type { MemoryBudget } from './memoryBudget';

/** A replay after a crash mid-import never has more than this much journal to read, unless the database is larger still (below). */
const UNCOVERED_JOURNAL_MIN = 64 * 1024 * 1024;

/**
 * What the store does between two operations of a bulk write (an import, a replay at open, a
 * rebuild) so that neither its memory nor the work a crash leaves grows with the write:
 *
 * - Written chunks leave memory through the spill file as the cache evicts them (chunkSpill.ts).
 *   Only when that file cannot be written (a full disk) do they stay, and once they fill their
 *   share of the budget the store checkpoints instead, after which they are clean.
 * - Once the journal past the snapshot is both over 64 MB and over half the database's size, the
 *   store checkpoints, so a crash leaves a bounded replay. Tied to the database's size, the
 *   checkpoints of a growing store come further apart as each costs more (it writes the whole
 *   file), and an import's checkpoints together cost a small multiple of one.
 *
 * Returns true when a checkpoint is due now.
 */
export function checkpointDue(budget: MemoryBudget, dbFile: DatabaseFile, uncoveredJournal: number, databaseBytes: () => number): boolean {
  if (dbFile.dirtyBytes >= budget.dirtyBytes && dbFile.spillFailure) return true;
  return uncoveredJournal >= UNCOVERED_JOURNAL_MIN && uncoveredJournal >= databaseBytes() / 2;
}
