/**
 * How many files' journal syncs an import leaves running before it waits for the oldest: enough
 * to keep working through a busy disk's fsyncs (tens of ms each in the bench), few enough that
 * a power cut loses little that was applied (a lost file is imported again next time).
 */
export const MAX_PENDING_SYNCS = 32;

type Settled = { failed: unknown } | undefined;

/**
 * The journal syncs of an import that are still running. The import reports success only once
 * all of them are done, and a failed one fails the import.
 */
export class PendingSyncs {
  private running: Promise<Settled>[] = [];

  get size(): number {
    return this.running.length;
  }

  /** Keeps `synced` running; once MAX_PENDING_SYNCS are, waits for the oldest. */
  async add(synced: Promise<void>): Promise<void> {
    // Settled into a value at once, so a failure is never an unhandled rejection while it waits here.
    this.running.push(synced.then(() => undefined, (err: unknown) => ({ failed: err })));
    while (this.running.length >= MAX_PENDING_SYNCS) {
      const oldest = await this.running.shift();
      if (oldest) throw oldest.failed;
    }
  }

  /** Waits for every running sync; rejects with the first failure among them. */
  async all(): Promise<void> {
    const settled = await Promise.all(this.running);
    this.running = [];
    const failure = settled.find((s) => s !== undefined);
    if (failure) throw failure.failed;
  }
}
