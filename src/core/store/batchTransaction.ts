import type { Database } from './sqlite';

/**
 * The transaction that replayed and applied operations share. The database is in memory and
 * never the durable copy (the journal is), so committing after every operation buys nothing,
 * while each COMMIT makes FTS4 flush its pending terms into a new segment. The batch commits as
 * soon as the event loop is free, and before anything exports the database, so a bulk import
 * pays for that once, not per file.
 */
export class BatchTransaction {
  private open = false;
  private scheduled: NodeJS.Immediate | undefined;

  /** Runs `fn` all or nothing (a savepoint) inside the batch, opening one when there is none. */
  run(db: Database, fn: () => void): void {
    if (!this.open) {
      db.exec('BEGIN');
      this.open = true;
      this.scheduled = setImmediate(() => this.commit(db));
    }
    db.exec('SAVEPOINT batch');
    try {
      fn();
      db.exec('RELEASE batch');
    } catch (err) {
      db.exec('ROLLBACK TO batch');
      db.exec('RELEASE batch');
      throw err;
    }
  }

  /**
   * Inside `run`: commits everything so far, runs `fn` on the committed database (a checkpoint
   * under memory pressure), then goes on in a new batch, so the caller's savepoint still exists.
   */
  commitMidway(db: Database, fn: () => void): void {
    db.exec('RELEASE batch');
    this.commit(db);
    try {
      fn();
    } finally {
      db.exec('BEGIN');
      this.open = true;
      this.scheduled = setImmediate(() => this.commit(db));
      db.exec('SAVEPOINT batch');
    }
  }

  commit(db: Database): void {
    this.cancelScheduled();
    if (!this.open) return;
    this.open = false;
    db.exec('COMMIT');
  }

  /** Drops a batch whose database is being closed without committing (a failed rebuild). */
  forget(): void {
    this.cancelScheduled();
    this.open = false;
  }

  private cancelScheduled(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
  }
}
