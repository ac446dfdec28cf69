import { ChunkSpill } from './chunkSpill';

/**
 * The most bytes of copies kept. They are file pages, not this process's memory: the kernel keeps
 * the ones read often cached and drops the others.
 */
const COPY_BYTES = 256 * 1024 * 1024;

/**
 * Uncompressed copies of clean chunks the cache dropped (pagedContents.ts), in a scratch file of
 * their own laid out as the spill's (chunkSpill.ts): loading such a chunk again is a read instead
 * of a brotli decompression. The caller decides which chunks are clean; a copy of a chunk written
 * since must be dropped (`drop`) before anything reads it. Once the file holds COPY_BYTES, only a
 * chunk dropped for the second time takes the place of the copy read least recently, so a single
 * scan of the database does not wash out the chunks queries come back to. A copy that cannot be
 * written is simply not kept, and one that cannot be read is dropped.
 */
export class ChunkCopies {
  private readonly file: ChunkSpill;
  /** Each copied chunk's slot, least recently read first. */
  private readonly slotOf = new Map<number, number>();
  private readonly limit: number;
  /** Reloads served by a copy. */
  reads = 0;

  constructor(
    path: string,
    private readonly chunkBytes: number,
  ) {
    this.file = new ChunkSpill(path, chunkBytes);
    this.limit = Math.floor(COPY_BYTES / chunkBytes);
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
    if (this.slotOf.size >= this.limit) {
      if (!droppedBefore) return;
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
  }

  close(): void {
    this.dropAll();
  }
}
