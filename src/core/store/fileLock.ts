import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import { StoreBusyError } from './errors';
import { processAlive } from './processAlive';
import { asRefusedWrite, FILE_MODE, removeQuietly, writeFully } from './fileWrites';

/** A lock file older than this with no readable owner was left by a crash between create and write. */
const OWNERLESS_STALE_MS = 2_000;
const MAX_WAIT_MS = 15_000;

/**
 * Cross-process mutex over one file, created with O_EXCL and naming its owner's pid.
 * A lock whose owner died (kill -9) is taken over at once, not after a timeout, because the
 * pid is checked. Durability never depends on this lock: journal appends are single
 * O_APPEND writes; the lock only serialises "read the latest state, validate, append".
 */
export class FileLock {
  private readonly me = `${process.pid} ${os.hostname()} ${randomBytes(6).toString('hex')}`;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly lockPath: string) {}

  /** Runs `fn` holding the lock; callers in this process queue behind each other first. */
  async withLock<T>(fn: () => T): Promise<T> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((r) => (release = r));
    await previous;
    try {
      await this.acquire();
      try {
        return fn();
      } finally {
        this.release();
      }
    } finally {
      release();
    }
  }

  private async acquire(): Promise<void> {
    const started = Date.now();
    let delay = 0.2;
    for (;;) {
      if (this.tryCreate()) return;
      this.removeIfStale();
      if (Date.now() - started > MAX_WAIT_MS) {
        throw new StoreBusyError(`store is busy: ${this.lockPath} held by "${this.readOwner() ?? 'unknown'}" for over ${MAX_WAIT_MS} ms`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 20);
    }
  }

  /**
   * Creates the lock naming this process. A lock that cannot be written whole (a full disk
   * lets the file be created but not its owner written) is removed at once and the caller
   * refused: left empty, it would make every later call wait for it to age into a stale lock.
   */
  private tryCreate(): boolean {
    let fd: number;
    try {
      fd = fs.openSync(this.lockPath, 'wx', FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw asRefusedWrite(err, this.lockPath, this.me.length);
    }
    try {
      writeFully(fd, Buffer.from(this.me, 'utf8'));
    } catch (err) {
      fs.closeSync(fd);
      removeQuietly(this.lockPath);
      throw asRefusedWrite(err, this.lockPath, this.me.length);
    }
    fs.closeSync(fd);
    return true;
  }

  private release(): void {
    // Only remove the lock if it is still ours: a peer may have judged us dead and taken it.
    if (this.readOwner() === this.me) fs.rmSync(this.lockPath, { force: true });
  }

  private readOwner(): string | undefined {
    try {
      return fs.readFileSync(this.lockPath, 'utf8');
    } catch {
      return undefined;
    }
  }

  private removeIfStale(): void {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.lockPath);
    } catch {
      return;
    }
    const owner = this.readOwner();
    const stale = owner ? ownerIsDead(owner) : Date.now() - stat.mtimeMs > OWNERLESS_STALE_MS;
    if (!stale) return;
    // Re-read just before removing, so a lock freshly re-taken by a live peer is left alone.
    if (this.readOwner() !== owner) return;
    try {
      fs.rmSync(this.lockPath, { force: true });
    } catch (err) {
      throw asRefusedWrite(err, this.lockPath, 0); // a dead process's lock on a disk since made read-only
    }
  }
}

function ownerIsDead(owner: string): boolean {
  const [pidText, host] = owner.split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (host !== os.hostname()) return false; // another machine on a shared disk: cannot tell, wait
  return !processAlive(pid);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
