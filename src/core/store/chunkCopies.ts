import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChunkSpill } from './chunkSpill';

/**
 * Free space the copies always leave on their file system, the larger of the two: the journal,
 * the spill and a checkpoint's new snapshot come before them. Copies are file pages, not this
 * process's memory (the kernel keeps the ones read often cached), so disk space is their only
 * bound; a query that scans more of the database than the cache holds, as lcm_grep's do, then
 * reads every dropped chunk back from a copy instead of decompressing it each time.
 */
const KEEP_FREE_BYTES = 1024 * 1024 * 1024;
const KEEP_FREE_SHARE = 0.1;
/** Copies made before the free space is looked at again. */
const RECHECK_BYTES = 64 * 1024 * 1024;
/** Where the free space cannot be read: a fixed bound. */
const UNKNOWN_FREE_LIMIT_BYTES = 256 * 1024 * 1024;

/** Bytes the file system holding `file` can still give the copies; undefined where that cannot be read. */
export function roomForCopies(file: string): number | undefined {
  try {
    const fsStats = fs.statfsSync(path.dirname(file));
    const free = fsStats.bavail * fsStats.bsize;
    return Math.max(0, free - Math.max(KEEP_FREE_BYTES, KEEP_FREE_SHARE * fsStats.blocks * fsStats.bsize));
  } catch {
    return undefined;
  }
}

/**
 * Uncompressed copies of clean chunks the cache dropped (pagedContents.ts), in a scratch file of
 * their own laid out as the spill's (chunkSpill.ts): loading such a chunk again is a read instead
 * of a brotli decompression. The caller decides which chunks are clean; a copy of a chunk written
 * since must be dropped (`drop`) before anything reads it. Once the disk has no more room for them
 * (KEEP_FREE_BYTES), only a chunk dropped for the second time takes the place of the copy read
 * least recently, so a single scan of the database does not wash out the chunks queries come back
 * to. A copy that cannot be written is simply not kept, and one that cannot be read is dropped.
 */
export class ChunkCopies {
  private readonly file: ChunkSpill;
  /** Each copied chunk's slot, least recently read first. */
  private readonly slotOf = new Map<number, number>();
  /** Copies that may be held before the free space is looked at again. */
  private limit = 0;
  /** Whether the last look found no more room: past `limit`, only replacement. */
  private full = false;
  /** Reloads served by a copy, and pages read from one without loading its chunk. */
  reads = 0;
  partReads = 0;

  constructor(
    file: string,
    private readonly chunkBytes: number,
    /** The disk's room for more copies (roomForCopies; tests pass a smaller disk). */
    private readonly room: () => number | undefined = () => roomForCopies(file),
  ) {
    this.file = new ChunkSpill(file, chunkBytes);
  }

  /** Whether one more copy fits: the free space is read when the copies reach what the last read allowed. */
  private fits(): boolean {
    if (this.slotOf.size < this.limit) return true;
    if (this.full) return false;
    const room = this.room();
    const step = RECHECK_BYTES / this.chunkBytes;
    if (room === undefined) {
      this.limit = Math.floor(UNKNOWN_FREE_LIMIT_BYTES / this.chunkBytes);
      this.full = true;
    } else {
      const more = Math.floor(room / this.chunkBytes);
      this.limit = this.slotOf.size + Math.min(more, step);
      this.full = more < step;
    }
    return this.slotOf.size < this.limit;
  }

  get size(): number {
    return this.slotOf.size;
  }

  has(i: number): boolean {
    return this.slotOf.has(i);
  }

  /** Keeps a copy of clean chunk `i` (the whole chunk, zeros past the file's end included: a file grown since reads it at full length). */
  keep(i: number, chunk: Buffer, droppedBefore: boolean): void {
    if (this.file.failed || this.slotOf.has(i)) return;
    if (!this.fits()) {
      // A disk with no room at all holds no copy to replace.
      if (!droppedBefore || this.slotOf.size === 0) return;
      this.drop(this.slotOf.keys().next().value as number);
    }
    const slot = this.file.put(chunk);
    if (slot !== undefined) this.slotOf.set(i, slot);
  }

  /** Chunk i's bytes into `into`; undefined when it has no copy (any more) or the copy cannot be read. */
  read(i: number, into: Buffer): Buffer | undefined {
    const slot = this.slotOf.get(i);
    if (slot === undefined) return undefined;
    try {
      const data = this.file.read(slot, this.chunkBytes, into);
      this.slotOf.delete(i);
      this.slotOf.set(i, slot);
      this.reads++;
      return data;
    } catch {
      this.drop(i);
      return undefined;
    }
  }

  /**
   * `length` bytes of chunk i's copy from `offset` (a page SQLite asked for), without loading the
   * chunk; undefined as for `read`.
   */
  readPart(i: number, offset: number, length: number): Buffer | undefined {
    const slot = this.slotOf.get(i);
    if (slot === undefined) return undefined;
    try {
      const data = this.file.readPart(slot, offset, length);
      this.slotOf.delete(i);
      this.slotOf.set(i, slot);
      this.partReads++;
      return data;
    } catch {
      this.drop(i);
      return undefined;
    }
  }

  /** Chunk i's copy no longer holds its bytes (it was written). */
  drop(i: number): void {
    const slot = this.slotOf.get(i);
    if (slot === undefined) return;
    this.slotOf.delete(i);
    this.file.release(slot);
  }

  /** Gives the file's disk space back (a full disk needs it for the journal and a checkpoint); later copies start a new file. */
  dropAll(): void {
    this.slotOf.clear();
    this.file.close();
    // The space is looked at again before the next copy: the disk was full.
    this.limit = 0;
    this.full = false;
  }

  close(): void {
    this.dropAll();
  }
}
