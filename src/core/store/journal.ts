import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreCorruptError, WriteRefusedError } from './errors';
import { asRefusedWrite, folderWritable, readOnlyStore, writeFully } from './fileWrites';
import { encodeLine, parseOperation, type JournalProblem, type Operation } from './journalLine';
import { LiveFile } from './journalLive';
import { listSegments, replaySegment } from './journalSegments';

export { encodeLine, parseOperation, type JournalProblem, type Operation } from './journalLine';

const READ_CHUNK = 8 * 1024 * 1024;
const NEWLINE = 0x0a;
/** Where sealed segments live, beside journal.jsonl. */
export const SEALED_DIR = 'journal.sealed';

/**
 * The append-only journal: one JSON line per operation. Every process appends with a single
 * O_APPEND write followed by fdatasync before it acknowledges, so a write survives kill -9
 * and concurrent appenders never interleave bytes.
 *
 * Offsets are logical: positions in the journal as if it were one file from the first operation
 * on. Sealing (journalSeal.ts) moves an old prefix into compressed segments and renames a new
 * journal.jsonl, whose header names the offset it starts at, over the old one; a process still
 * holding the old file reads it to its end and then continues in the new one at the same offset.
 */
export class Journal {
  private live: LiveFile;
  /** Earlier generations whose descriptors a running fdatasync may still use. */
  private retired: LiveFile[] = [];
  /** The background fdatasync running now, and the one queued to start when it ends (see sync). */
  private syncRunning: Promise<void> | undefined;
  private syncQueued: Promise<void> | undefined;
  private closed = false;
  readonly sealedDir: string;

  constructor(readonly path: string) {
    this.live = LiveFile.open(path);
    this.sealedDir = pathBeside(path, SEALED_DIR);
  }

  /** The logical offset just past the last byte of the file this process holds. */
  size(): number {
    return this.live.logicalEnd();
  }

  /** The logical offset the live file starts at: everything before it is in sealed segments. */
  get base(): number {
    return this.live.base;
  }

  /**
   * True when nothing was appended past `offset` and the file was not replaced by a seal: what
   * every read asks first, answered with one stat of the path (an fstat of our descriptor could
   * not see the replacement).
   */
  unchangedSince(offset: number): boolean {
    const size = this.live.currentSize(this.path);
    return size !== undefined && this.live.base + Math.max(0, size - this.live.headerLen) <= offset;
  }

  /** True when sealing has put a newer file at the path than the one this process holds (one stat). */
  replaced(): boolean {
    return !this.live.isCurrent(this.path);
  }

  /**
   * Appends and syncs. A line torn by a crash (no trailing newline) is first closed off so the
   * new line does not glue onto it; the fragment then reads as one unparseable line. Callers hold
   * the store lock and have caught up (which moves to the newest file); a replaced file here
   * means something else swapped it, and writing there would lose the line, so it refuses.
   *
   * A write that stores only part of the line (a full disk) is undone: the file is cut back to
   * where it was, so the torn bytes (no newline yet, so no reader has taken them) never count,
   * and the caller is refused (WriteRefusedError), never told the line was kept. A line written
   * whole whose fdatasync fails is left in place: other processes may have read it already, and
   * cutting it out under them would shift every offset they hold; the caller is still refused.
   */
  append(op: Operation, options: { sync: boolean } = { sync: true }): number {
    const fd = this.live.appendFd;
    if (fd === undefined) throw this.readOnly();
    if (this.replaced()) throw new Error(`journal ${this.path} was replaced while this process held the store lock; nothing was written`);
    const size = this.live.physicalSize();
    const prefix = size > this.live.headerLen && this.lastByte(size) !== NEWLINE ? '\n' : '';
    const line = Buffer.from(prefix + encodeLine(op) + '\n', 'utf8');
    try {
      writeFully(fd, line);
    } catch (err) {
      this.cutBackTo(fd, size);
      throw asRefusedWrite(err, this.path, line.length);
    }
    if (options.sync) {
      try {
        fs.fdatasyncSync(fd);
      } catch (err) {
        throw asRefusedWrite(err, this.path, line.length);
      }
    }
    return line.length;
  }

  /** Why a journal held for reading only refuses a line: its folder, or the file alone, could not be written at open. */
  private readOnly(): WriteRefusedError {
    const folder = path.dirname(this.path);
    if (!folderWritable(folder)) return readOnlyStore(folder, 'EROFS');
    const problem = `the journal ${this.path} could not be written when this process opened the store`;
    return new WriteRefusedError(problem, `${problem}: memory can be read but nothing can be saved. Give its owner write permission on the file and try again.`);
  }

  /** Removes a partly written line; if even that fails, the fragment stays unterminated and is closed off by the next append (see append). */
  private cutBackTo(fd: number, size: number): void {
    try {
      fs.ftruncateSync(fd, size);
    } catch {
      // See above: a fragment without a newline is skipped by every reader.
    }
  }

  /**
   * Flushes every line written so far (by any process: fdatasync covers the whole file) on the
   * thread pool, so the caller's thread can go on working meanwhile. Calls made while one runs
   * share a single next fdatasync, started when it ends: it covers every line written before
   * any of them asked. One fdatasync per call instead queued up behind each other on a busy disk
   * (about 25 ms each in the bench, against 1–5 ms alone). A line in a file that sealing has
   * replaced since was copied into the new file, which sealing synced before the rename.
   */
  sync(): Promise<void> {
    if (this.syncQueued) return this.syncQueued;
    if (!this.syncRunning) return this.startSync();
    const done = () => undefined;
    this.syncQueued = this.syncRunning.then(done, done).then(() => {
      this.syncQueued = undefined;
      return this.startSync();
    });
    return this.syncQueued;
  }

  /** `sync` on this thread, for a checkpoint that must not cover a line the disk may still lose. */
  syncNow(): void {
    if (!this.closed && this.live.appendFd !== undefined) fs.fdatasyncSync(this.live.appendFd);
  }

  private startSync(): Promise<void> {
    const fd = this.live.appendFd;
    // close() synced everything before closing the descriptor; a read-only journal has nothing to sync.
    if (this.closed || fd === undefined) return Promise.resolve();
    const p = new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(asRefusedWrite(err, this.path, 0)) : resolve())));
    this.syncRunning = p;
    const clear = () => {
      if (this.syncRunning === p) this.syncRunning = undefined;
      this.closeRetired();
    };
    p.then(clear, clear);
    return p;
  }

  /**
   * Reads complete lines from `offset` to the end — from sealed segments below the live file's
   * base, then the file this process holds, then any newer file sealing put in its place. Returns
   * the offset just past the last complete line; a partial last line is left for the next read.
   */
  readFrom(offset: number, onOp: (op: Operation, endOffset: number) => void, onProblem: (p: JournalProblem) => void): number {
    let pos = offset;
    for (;;) {
      if (pos < this.live.base) pos = this.readSealed(pos, this.live.base, onOp, onProblem);
      pos = this.readLive(pos, onOp, onProblem);
      if (!this.replaced()) return pos;
      this.switchToCurrent();
    }
  }

  private readSealed(from: number, until: number, onOp: (op: Operation, endOffset: number) => void, onProblem: (p: JournalProblem) => void): number {
    const segments = listSegments(this.sealedDir);
    let pos = from;
    while (pos < until) {
      // Any segment holding pos will do: all are copies of the same immutable stream.
      const seg = segments.filter((s) => s.start <= pos && pos < s.end).sort((a, b) => b.end - a.end)[0];
      if (!seg) {
        throw new StoreCorruptError(
          `the journal's bytes from offset ${pos} were sealed, but no segment in ${this.sealedDir} holds them: restore the missing segment file or move the store aside.`,
          this.sealedDir,
        );
      }
      pos = replaySegment(seg, pos, until, onOp, onProblem);
    }
    return pos;
  }

  private readLive(offset: number, onOp: (op: Operation, endOffset: number) => void, onProblem: (p: JournalProblem) => void): number {
    const live = this.live;
    const end = live.physicalSize();
    let pos = live.physicalOf(offset);
    let carry: Buffer = Buffer.alloc(0);
    let carryStart = offset;
    while (pos < end) {
      const want = Math.min(READ_CHUNK, end - pos);
      const chunk = Buffer.allocUnsafe(want);
      const got = fs.readSync(live.readFd, chunk, 0, want, pos);
      if (got <= 0) break;
      pos += got;
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, got)]) : chunk.subarray(0, got);
      let lineStart = 0;
      for (let i = buf.indexOf(NEWLINE); i !== -1; i = buf.indexOf(NEWLINE, lineStart)) {
        const lineOffset = carryStart + lineStart;
        if (i > lineStart) {
          const text = buf.toString('utf8', lineStart, i);
          const op = parseOperation(text);
          if (typeof op === 'string') onProblem({ offset: lineOffset, reason: op });
          else onOp(op, carryStart + i + 1);
        }
        lineStart = i + 1;
      }
      carry = Buffer.from(buf.subarray(lineStart));
      carryStart += lineStart;
    }
    return carryStart;
  }

  /** Moves to the file now at the path; the old descriptors close once no fdatasync uses them. */
  private switchToCurrent(): void {
    const next = LiveFile.open(this.path);
    this.retired.push(this.live);
    this.live = next;
    this.closeRetired();
  }

  private closeRetired(): void {
    if (this.syncRunning || this.syncQueued) return;
    for (const old of this.retired.splice(0)) old.close();
  }

  close(): void {
    if ((this.syncRunning || this.syncQueued) && this.live.appendFd !== undefined) fs.fdatasyncSync(this.live.appendFd);
    this.closed = true;
    this.live.close();
    for (const old of this.retired.splice(0)) old.close();
  }

  private lastByte(size: number): number {
    const b = Buffer.alloc(1);
    fs.readSync(this.live.readFd, b, 0, 1, size - 1);
    return b[0] ?? NEWLINE;
  }
}

function pathBeside(file: string, name: string): string {
  return path.join(path.dirname(file), name);
}
