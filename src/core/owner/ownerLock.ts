import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import { FILE_MODE, removeQuietly, writeFully } from '../store/fileWrites';
import { processAlive } from '../store/processAlive';
import type { ProcessKind } from './protocol';

const OWNERLESS_STALE_MS = 2_000;

/** Who the lock file names. */
export interface LockHolder {
  pid: number;
  host: string;
  kind: string;
  /** Unique per claim, so a holder recognises its own lock and never removes a successor's. */
  nonce: string;
}

/**
 * The owner's claim on a store home: a file created with O_EXCL naming its pid, held for the
 * owner's whole life (not per operation, unlike the journal's FileLock). Creating it is the
 * election: the kernel lets exactly one O_EXCL create succeed. A claim whose process died
 * (kill -9) is removed by whoever finds it so, then the create decides again among them.
 */
export class OwnerLock {
  private mine: string | undefined;

  constructor(readonly file: string) {}

  /** The text a claim of this process names: pid, host, kind and a nonce of its own. */
  static claimText(kind: ProcessKind): string {
    return [process.pid, os.hostname(), kind, randomBytes(6).toString('hex')].join(' ');
  }

  /** True when this process now holds the claim; false when a live process does (or the lock is unreadable for now). */
  tryClaim(kind: ProcessKind): boolean {
    const me = OwnerLock.claimText(kind);
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = fs.openSync(this.file, 'wx', FILE_MODE);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (!this.removeIfDead()) return false;
        continue;
      }
      try {
        writeFully(fd, Buffer.from(me, 'utf8'));
      } catch (err) {
        fs.closeSync(fd);
        removeQuietly(this.file);
        throw err;
      }
      fs.closeSync(fd);
      this.mine = me;
      return true;
    }
    return false;
  }

  /** The text of the claim this process made, while it holds it (to hand to the StoreLink that will own the store). */
  ownClaim(): string | undefined {
    return this.held() ? this.mine : undefined;
  }

  holder(): LockHolder | undefined {
    const text = this.read();
    if (!text) return undefined;
    const [pid, host, kind, nonce] = text.split(' ');
    return { pid: Number(pid), host: host ?? '', kind: kind ?? '', nonce: nonce ?? '' };
  }

  /** Whether the claim is still this process's (a peer that judged it dead may have replaced it). */
  held(): boolean {
    return this.mine !== undefined && this.read() === this.mine;
  }

  /**
   * Hands the claim to another process (a handover): the file is replaced whole by a rename, so
   * at every instant it names exactly one holder, and nobody can claim the home in between.
   */
  handTo(claim: string): void {
    if (!this.held()) throw new Error('this process does not hold the store owner claim');
    const temp = `${this.file}.${process.pid}.handover`;
    fs.writeFileSync(temp, claim, { mode: FILE_MODE });
    fs.renameSync(temp, this.file);
    this.mine = undefined;
  }

  /** Takes up a claim the previous holder handed to this process; false when the file names someone else. */
  adopt(claim: string): boolean {
    this.mine = claim;
    if (this.held()) return true;
    this.mine = undefined;
    return false;
  }

  release(): void {
    if (this.held()) removeQuietly(this.file);
    this.mine = undefined;
  }

  /**
   * Removes the claim of a process that no longer runs, or that runs but was judged not to
   * serve (`force`, a reused pid). Every client sees a killed owner's socket close at the same
   * instant, so several judge its claim dead together; the re-read and the removal happen under
   * a breaker file made with O_EXCL, or one of them could remove the claim another had just
   * created in its place and both would own the store. False when another process is breaking
   * the claim right now: the caller tries again, and the create decides.
   */
  removeIfDead(force = false): boolean {
    const text = this.read();
    if (text === undefined) return true; // gone already: the create decides
    if (text === '') {
      if (!this.ownerlessTooLong()) return false;
    } else {
      const holder = this.holder();
      const dead = force || !holder || !Number.isInteger(holder.pid) || holder.pid <= 0 || (holder.host === os.hostname() && !processAlive(holder.pid));
      if (!dead) return false;
    }
    return this.whileBreaking(() => {
      const now = this.read();
      if (now === undefined) return true;
      if (now !== text) return false; // a live peer claimed it meanwhile
      removeQuietly(this.file);
      return true;
    });
  }

  private whileBreaking(remove: () => boolean): boolean {
    const breaker = `${this.file}.break`;
    let fd: number;
    try {
      fd = fs.openSync(breaker, 'wx', FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // Held for microseconds; one this old was left by a process killed while holding it.
      if (ageMs(breaker) > OWNERLESS_STALE_MS) removeQuietly(breaker);
      return false;
    }
    fs.closeSync(fd);
    try {
      return remove();
    } finally {
      removeQuietly(breaker);
    }
  }

  /** Created but never written: a claimant killed between create and write, once it is this old. */
  private ownerlessTooLong(): boolean {
    return ageMs(this.file) > OWNERLESS_STALE_MS;
  }

  private read(): string | undefined {
    try {
      return fs.readFileSync(this.file, 'utf8');
    } catch {
      return undefined;
    }
  }
}

/** How long ago a file was last written; infinite when it is gone. */
function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
