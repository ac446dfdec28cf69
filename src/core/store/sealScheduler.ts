import type { FileLock } from './fileLock';
import type { Journal } from './journal';
import { sealCovered, type SealResult } from './journalSeal';

/**
 * When a process seals the journal (journalSeal.ts): only the prefix the snapshot on disk already
 * covers, so ordinary opens never read segments, and only once it is at least `minBytes`
 * long. One seal runs at a time per process; closing cancels one in flight (it removes its temp
 * file and leaves the journal as it was), since a synchronous close cannot wait for it.
 */
export class SealScheduler {
  private running: Promise<SealResult | undefined> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly journal: Journal,
    private readonly lock: FileLock,
    private readonly minBytes: number,
    /** The journal offset the snapshot on disk covers, read when a seal starts. */
    private readonly covered: () => number,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * An import below the checkpoint threshold is checkpointed only by close(), which cannot wait
   * for a seal: the next long-lived process seals it, a while after it opened. The timer never
   * keeps a short-lived process alive.
   */
  sealLater(delayMs: number): void {
    if (this.covered() - this.journal.base < this.minBytes) return;
    this.timer = setTimeout(() => this.sealInBackground(), delayMs);
    this.timer.unref();
  }

  sealInBackground(): void {
    this.seal().catch((err: unknown) => this.warn(`sealing the journal failed: ${(err as Error).message}`));
  }

  /** Seals what the snapshot covers; resolves to what was sealed, or undefined when nothing was. */
  seal(): Promise<SealResult | undefined> {
    if (this.running) return this.running;
    const upTo = this.covered();
    if (this.closed || upTo <= this.journal.base) return Promise.resolve(undefined);
    this.running = sealCovered({
      journalPath: this.journal.path,
      sealedDir: this.journal.sealedDir,
      lock: this.lock,
      upTo,
      minBytes: this.minBytes,
      cancelled: () => this.closed,
    }).finally(() => (this.running = undefined));
    return this.running;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
