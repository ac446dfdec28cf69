import * as fs from 'node:fs';
import * as path from 'node:path';
import { fork, type ChildProcess } from 'node:child_process';
import { identityOf, sameIdentity, type CompactedFile } from './compactionJob';
import type { CompactionReply, CompactionRequest } from './compactionWorker';
import { replaceFileDurably, syncFolder } from './durableFile';
import type { FileLock } from './fileLock';
import { RETURNING_MALLOC_ENV } from './memoryBudget';
import { removeDeadTemps } from './strayTemps';

/** What `Store.compact()` did: the snapshot was replaced by its table-ordered copy, or why not. */
export type CompactResult =
  | ({ ok: true; wallMs: number; /** The child process's peak RSS (bytes). */ childMaxRss: number } & Omit<CompactedFile, 'out' | 'source'>)
  | { ok: false; reason: string; wallMs: number; /** A checkpoint replaced the snapshot while the copy was made; the copy was dropped. */ superseded?: true };

/** Written beside the snapshot after each compaction; the database's content never records it. */
export interface CompactionRecord {
  at: number;
  databaseBytes: number;
  coveredOffset: number;
}

/** Below this the whole database decompresses in a few dozen milliseconds: nothing to gain. */
export const COMPACT_MIN_BYTES = 16 * 1024 * 1024;
/** Growth since the last compaction that makes the next one worth its cost (seconds of work, and the database twice over on disk meanwhile). */
export const COMPACT_GROWTH = 0.25;
const RECORD = 'store.compaction.json';

/**
 * What the compaction's process holds at its peak, whatever the database's size: the chunk
 * caches of the source and of the copy (`cacheBytes` between them, compactionJob.ts), and
 * besides them Node with sql.js (~55 MB) and what the job churns through before the collector
 * frees it (chunk buffers, compressed chunks, SQLite's own heap). The fixed part is measured:
 * 123 MB over a 16 MB cache on a 116 MB database (test/unit/compactionBudget.test.ts checks
 * it), 143–152 MB over 154 MB and 16 MB caches on a 176 MB one, rounded up. A budget below this skips
 * compaction (Store.compact says so).
 */
export const COMPACTION_FIXED_BYTES = 160 * 1024 * 1024;

export function compactionPeakBytes(cacheBytes: number): number {
  return COMPACTION_FIXED_BYTES + cacheBytes;
}

export interface CompactorOptions {
  home: string;
  snapshotFile: string;
  wasmPath: string;
  workerPath: string;
  /** Smallest database worth compacting (default COMPACT_MIN_BYTES). */
  minBytes?: number;
  /** The chunk cache the child holds, shared by the source and the copy (memoryBudget.ts). */
  cacheBytes?: number;
  lock: FileLock;
  now: () => number;
  /**
   * Called under the lock right after the compacted file replaced the snapshot: the owner
   * reopens its database from it, or its next checkpoint would write the old layout back.
   */
  swapped: (coveredOffset: number) => Promise<void> | void;
}

/**
 * Runs one compaction at a time (compactionJob.ts in a child process) and swaps its file in
 * under the store lock only if the snapshot is still the file that was compacted: a checkpoint
 * by any process meanwhile wins, and the compacted copy is discarded (the store then tries again
 * if it is still due: that checkpoint found this one running and started none). Until the rename the old snapshot is untouched, so a crash loses nothing;
 * a dead process's temp file is removed by the next open or compaction (strayTemps.ts).
 */
export class Compactor {
  private running: Promise<CompactResult> | undefined;
  private child: { process: ChildProcess; out: string } | undefined;
  private closed = false;

  constructor(private readonly options: CompactorOptions) {}

  get record(): CompactionRecord | undefined {
    try {
      const parsed = JSON.parse(fs.readFileSync(path.join(this.options.home, RECORD), 'utf8')) as Partial<CompactionRecord>;
      return typeof parsed.databaseBytes === 'number' ? (parsed as CompactionRecord) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether a database of this size is worth compacting now (measured: see the bench's section 2). */
  due(databaseBytes: number): boolean {
    if (this.running || this.closed || databaseBytes < (this.options.minBytes ?? COMPACT_MIN_BYTES) || !fs.existsSync(this.options.workerPath)) return false;
    const last = this.record;
    return !last || databaseBytes >= last.databaseBytes * (1 + COMPACT_GROWTH);
  }

  /**
   * `background`: started by an idle checkpoint, so it must never keep the process alive (one that
   * exits leaves a temp file the next run removes); an explicit call is awaited, and is kept alive.
   */
  compact(background = false): Promise<CompactResult> {
    this.running ??= this.compactOnce(background).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops a compaction in flight (its temp file is removed); the snapshot stays as it was. */
  close(): void {
    this.closed = true;
    const child = this.child;
    if (!child) return;
    child.process.kill('SIGKILL');
    fs.rmSync(child.out, { force: true });
  }

  private async compactOnce(background: boolean): Promise<CompactResult> {
    const t0 = performance.now();
    const { snapshotFile, workerPath } = this.options;
    const refuse = (reason: string): CompactResult => ({ ok: false, reason, wallMs: performance.now() - t0 });
    if (this.closed) return refuse('the store is closing');
    if (!fs.existsSync(snapshotFile)) return refuse('there is no snapshot to compact yet');
    if (!fs.existsSync(workerPath)) return refuse(`the compaction worker ${workerPath} is missing from this build`);
    removeDeadTemps(path.dirname(snapshotFile));
    const out = `${snapshotFile}.tmp-${process.pid}-compact`;
    let file: CompactedFile;
    let childMaxRss: number;
    try {
      ({ file, childMaxRss } = await this.inChild({ wasmPath: this.options.wasmPath, snapshotFile, out, ...(this.options.cacheBytes ? { cacheBytes: this.options.cacheBytes } : {}) }, background));
    } catch (err) {
      fs.rmSync(out, { force: true });
      return refuse(`compaction failed: ${(err as Error).message}`);
    }
    let swapped: Awaited<ReturnType<typeof swapIn>>;
    try {
      swapped = await swapIn(this.options, file, () => this.closed);
    } catch (err) {
      fs.rmSync(out, { force: true });
      return refuse(`compaction failed: ${(err as Error).message}`);
    }
    if (swapped.ok) return { ok: true, wallMs: performance.now() - t0, childMaxRss, ...swapped.stats };
    // `superseded` travels with the refusal: the store starts the compaction again on it.
    return 'superseded' in swapped ? { ok: false, reason: swapped.reason, wallMs: performance.now() - t0, superseded: true } : refuse(swapped.reason);
  }

  private inChild(request: CompactionRequest, background: boolean): Promise<{ file: CompactedFile; childMaxRss: number }> {
    return new Promise((resolve, reject) => {
      // A process, not a thread: the job's caches and churn never count against the owner
      // (the extension host, in VS Code), and `--expose-gc` is the child's flag, not the owner's.
      const env = { ...process.env, ...RETURNING_MALLOC_ENV };
      const child = fork(this.options.workerPath, [], { execArgv: ['--expose-gc'], env, serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      if (background) {
        child.unref();
        child.channel?.unref();
      }
      this.child = { process: child, out: request.out };
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        fn();
      };
      child.once('message', (m: CompactionReply) => {
        settle(() => (m.ok ? resolve({ file: m.result, childMaxRss: m.maxRss }) : reject(new Error(m.error))));
      });
      child.once('error', (err) => settle(() => reject(err)));
      child.once('exit', (code, signal) => {
        if (this.child?.process === child) this.child = undefined;
        // A child killed midway leaves its spill files (named by its pid, now dead): they go now, not at the next open.
        if (signal) removeDeadTemps(path.dirname(request.snapshotFile));
        settle(() => reject(new Error(this.closed ? 'stopped because the store closed' : `the compaction process exited (${signal ?? `code ${code}`}) without an answer`)));
      });
      child.send(request);
    });
  }
}

/**
 * Under the store lock: renames the compacted file over the snapshot only when the snapshot is
 * still the file that was compacted (same inode, size and time); otherwise, or when the store is
 * closing, the compacted file is deleted and the snapshot left as it is.
 */
export async function swapIn(
  options: Pick<CompactorOptions, 'lock' | 'snapshotFile' | 'home' | 'now' | 'swapped'>,
  file: CompactedFile,
  closed: () => boolean = () => false,
): Promise<{ ok: true; stats: Omit<CompactedFile, 'out' | 'source'> } | { ok: false; reason: string }> {
  const { snapshotFile } = options;
  return options.lock.withLock(async () => {
    let current: fs.Stats | undefined;
    try {
      current = fs.statSync(snapshotFile);
    } catch {
      current = undefined;
    }
    if (closed() || !current || !sameIdentity(identityOf(current), file.source)) {
      fs.rmSync(file.out, { force: true });
      if (closed()) return { ok: false as const, reason: 'the store closed during compaction' };
      return { ok: false as const, reason: 'another checkpoint replaced the snapshot meanwhile; the compacted copy was discarded', superseded: true as const };
    }
    fs.renameSync(file.out, snapshotFile);
    syncFolder(path.dirname(snapshotFile));
    const record: CompactionRecord = { at: options.now(), databaseBytes: file.databaseBytesAfter, coveredOffset: file.coveredOffset };
    replaceFileDurably(path.join(options.home, RECORD), JSON.stringify(record));
    try {
      await options.swapped(file.coveredOffset);
    } catch (err) {
      return { ok: false as const, reason: `compaction failed after the swap: this process could not reopen the compacted snapshot (${(err as Error).message}); it reads the old file until it reopens` };
    }
    const stats: Omit<CompactedFile, 'out' | 'source'> & Partial<Pick<CompactedFile, 'out' | 'source'>> = { ...file };
    delete stats.out;
    delete stats.source;
    return { ok: true as const, stats };
  });
}
