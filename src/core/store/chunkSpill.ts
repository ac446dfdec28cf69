import * as fs from 'node:fs';
import { FILE_MODE, readFully, removeQuietly } from './fileWrites';

/**
 * A scratch file beside the snapshot (`store.sqlite.tmp-<pid>-spill`) where the paged contents
 * put chunks written since the last checkpoint, so they can leave memory without a checkpoint.
 * The journal is the durable copy: this file only stands in for memory, is never synced, and
 * goes with its process (removed at close; a crashed process's is removed by the next open, as
 * every dead process's temp file is, strayTemps.ts).
 *
 * A checkpoint needs as little: before, every time written chunks filled their share of the
 * budget the store wrote a whole new snapshot, recompressing them and copying every other chunk;
 * an import under the budget spent most of its time there.
 *
 * The file is cut into slots of one chunk. A chunk written again gets a new slot and its old one
 * is released. A checkpoint running in the background pins the slots it captured (`readerOf`) and lets
 * each go once it has read it: a released slot is reused only when no capture still has to read
 * it, so the bytes a checkpoint reads are the ones it captured. Pinning slot by slot, not the
 * whole file, is what bounds the file: held whole for a long checkpoint, every chunk SQLite
 * wrote and evicted again meanwhile took a new slot, and an import's file grew without end.
 */
export class ChunkSpill {
  private fd: number | undefined;
  private slots = 0;
  private readonly free: number[] = [];
  /** Slots a capture still has to read, with how many captures do. */
  private readonly pins = new Map<number, number>();
  /** Of those, the ones released meanwhile: free once the last capture reading them is done. */
  private readonly retired = new Set<number>();
  private inUse = 0;
  /** Set when the file could not be written (a full or read-only disk): chunks then stay in memory, as without a spill. */
  failed: Error | undefined;
  /** Chunks written here so far, and read back. */
  writes = 0;
  reads = 0;

  constructor(
    private readonly file: string,
    private readonly chunkBytes: number,
  ) {}

  /** Slots holding a chunk's current bytes, times the chunk size: the scratch file's live part. */
  get bytes(): number {
    return this.inUse * this.chunkBytes;
  }

  /** Writes a chunk; returns its slot, or undefined when the file cannot take it (the chunk stays in memory). */
  put(data: Uint8Array): number | undefined {
    if (this.failed) return undefined;
    try {
      this.fd ??= fs.openSync(this.file, 'w+', FILE_MODE);
      const slot = this.free.pop() ?? this.slots++;
      writeAt(this.fd, data, slot * this.chunkBytes);
      this.inUse++;
      this.writes++;
      return slot;
    } catch (err) {
      this.failed = err instanceof Error ? err : new Error(String(err));
      return undefined;
    }
  }

  /** The `length` bytes in `slot`, into `into` when given. Throws on a read error (the caller treats it as a damaged chunk). */
  read(slot: number, length: number, into?: Buffer): Buffer {
    const buf = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
    this.readInto(slot, 0, buf);
    this.reads++;
    return buf;
  }

  /** `length` bytes of `slot` from `offset` into it, in a new buffer. Throws as `read` does. */
  readPart(slot: number, offset: number, length: number): Buffer {
    const buf = Buffer.allocUnsafe(length);
    this.readInto(slot, offset, buf);
    return buf;
  }

  private readInto(slot: number, offset: number, buf: Buffer): void {
    const fd = this.fd;
    if (fd === undefined) throw new Error('the spill file is closed');
    const done = readFully(fd, buf, slot * this.chunkBytes + offset);
    if (done < buf.length) throw new Error(`the spill file ends ${buf.length - done} bytes short of slot ${slot}`);
  }

  /** The slot no longer holds a chunk's current bytes. */
  release(slot: number): void {
    this.inUse--;
    if (this.pins.has(slot)) this.retired.add(slot);
    else this.free.push(slot);
    this.shrinkWhenEmpty();
  }

  /**
   * What a checkpoint's capture reads the slots it took with: each slot is read once, and is
   * free for reuse once released and read (or the capture is done), unless another capture still
   * has to read it.
   */
  readerOf(slots: readonly number[]): { read(slot: number, length: number, into?: Buffer): Buffer; done(): void } {
    const pinned = new Set(slots);
    for (const slot of pinned) this.pins.set(slot, (this.pins.get(slot) ?? 0) + 1);
    const unpin = (slot: number) => {
      if (pinned.delete(slot)) this.unpin(slot);
    };
    return {
      read: (slot, length, into) => {
        try {
          return this.read(slot, length, into);
        } finally {
          unpin(slot);
        }
      },
      done: () => {
        for (const slot of [...pinned]) unpin(slot);
      },
    };
  }

  private unpin(slot: number): void {
    const n = this.pins.get(slot);
    if (n === undefined) return;
    if (n > 1) return void this.pins.set(slot, n - 1);
    this.pins.delete(slot);
    if (this.retired.delete(slot)) {
      this.free.push(slot);
      this.shrinkWhenEmpty();
    }
  }

  /** The file's length in slots: what it takes on disk, live or not. */
  get slotCount(): number {
    return this.slots;
  }

  /** Nothing lives here any more (a checkpoint saved every chunk): the disk space goes back. */
  private shrinkWhenEmpty(): void {
    if (this.inUse > 0 || this.pins.size > 0 || this.fd === undefined) return;
    this.free.length = 0;
    this.retired.clear();
    this.slots = 0;
    try {
      fs.ftruncateSync(this.fd, 0);
    } catch {
      // The space comes back at close instead.
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
    removeQuietly(this.file);
  }
}

function writeAt(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; ) {
    const n = fs.writeSync(fd, data, done, data.length - done, position + done);
    if (n <= 0) throw Object.assign(new Error(`ENOSPC: no space left on device, the spill file stored ${done} of ${data.length} bytes`), { code: 'ENOSPC' });
    done += n;
  }
}
