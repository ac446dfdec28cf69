import type { Journal, Operation } from './journal';
import { PURGED_OP } from './journalSegments';
import type { StoreModule } from './schema';
import type { Database } from './sqlite';

/**
 * Applies journal operations to the database through the modules' appliers (the replay): the one
 * path for a replayed line and for a line this process has just written, so every process applies the
 * same thing. Each operation is all or nothing (a savepoint); one that fails, or that this build
 * does not know, is skipped, counted and explained in `warnings`.
 */
export class OperationAppliers {
  /** By operation name; the bench wraps them to time each kind. */
  readonly appliers: Map<string, (db: Database, op: Operation) => void>;
  /** Lines and operations skipped so far (torn lines too: the store counts those here). */
  skipped = 0;
  /**
   * A line a newer build wrote was skipped: a checkpoint from here would cover it without its
   * effect and hide it from every process (that newer build too) that opens the checkpoint.
   */
  sawUnknownOp = false;

  constructor(
    modules: readonly StoreModule[],
    private readonly warnings: string[],
  ) {
    this.appliers = new Map(modules.flatMap((m) => Object.entries(m.appliers)));
  }

  /**
   * Applies the journal's operations from `from` (a line start) to its end, counting and
   * explaining the lines it cannot read; `afterEach` runs after each with the offset past it,
   * and `progress` hears of every hundredth of the journal. Returns the offset read to.
   */
  replay(journal: Journal, db: Database, from: number, afterEach: (end: number) => void, progress?: (done: number, total: number) => void): number {
    const total = progress ? journal.size() : 0;
    const step = Math.max(1, Math.floor(total / 100));
    let told = from;
    const onOp = (op: Operation, end: number) => {
      this.apply(db, op);
      afterEach(end);
      if (progress && end - told >= step) {
        told = end;
        progress(end, total);
      }
    };
    const end = journal.readFrom(from, onOp, (problem) => {
      this.skipped++;
      this.warnings.push(`journal line at byte ${problem.offset} skipped: ${problem.reason}`);
    });
    if (progress && told > 0 && told < end) progress(end, Math.max(total, end));
    return end;
  }

  apply(db: Database, op: Operation): void {
    if (op.op === PURGED_OP) return; // a line a purge emptied (journalPurge.ts)
    const apply = this.appliers.get(op.op);
    if (!apply) {
      this.skipped++;
      this.sawUnknownOp = true;
      this.warnings.push(`journal operation "${op.op}" is unknown to this build and was skipped; this process writes no checkpoint from now on (a newer build wrote the store: update Recollect)`);
      return;
    }
    db.exec('SAVEPOINT op');
    try {
      apply(db, op);
      db.exec('RELEASE op');
    } catch (err) {
      db.exec('ROLLBACK TO op');
      db.exec('RELEASE op');
      this.skipped++;
      this.warnings.push(`journal operation "${op.op}" failed to apply: ${(err as Error).message}`);
    }
  }
}
