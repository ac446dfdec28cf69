import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FILE_MODE, readFully, removeQuietly } from '../../store/fileWrites';

/**
 * One fixed-size record a kept vector, by slot, in a scratch file of this process: what the
 * exact rescoring of a ranking reads for its few thousand candidates, so the process does not
 * hold every vector's bytes. The blobs stay the durable copy; this file only stands in for
 * memory, is never synced, and goes with its process (removed at close; a crashed process's is
 * removed as every dead process's temp file is, strayTemps.ts, by the name's pid). The OS keeps
 * the file's pages in its cache while it has room, which no process's memory counts.
 *
 * Where no file can be written (a read-only home and temp folder), the records are kept in
 * memory instead, as before this file existed; `heldBytes` says so.
 */
export class VectorRecords {
  private fd: number | undefined;
  private file: string | undefined;
  /** The fallback: every record in memory. */
  private memory: Uint8Array | undefined;
  private written = 0;

  constructor(
    readonly recordBytes: number,
    private readonly dirs: readonly string[],
    private readonly name: string,
  ) {}

  /** Writes whole records back to back from slot `from`. */
  write(from: number, records: Uint8Array): void {
    const at = from * this.recordBytes;
    this.open();
    if (this.fd !== undefined) {
      for (let done = 0; done < records.byteLength; ) done += fs.writeSync(this.fd, records, done, records.byteLength - done, at + done);
    } else {
      const need = at + records.byteLength;
      if (!this.memory || this.memory.byteLength < need) {
        const grown = new Uint8Array(Math.max(need, (this.memory?.byteLength ?? 0) * 2, 1 << 16));
        if (this.memory) grown.set(this.memory.subarray(0, this.written));
        this.memory = grown;
      }
      this.memory.set(records, at);
    }
    this.written = Math.max(this.written, at + records.byteLength);
  }

  /**
   * The records of `slots` (ascending), back to back in that order. Slots near each other are
   * read in one call: a read of a few kilobytes more costs less than another system call.
   */
  read(slots: Uint32Array): Uint8Array {
    const per = this.recordBytes;
    const out = new Uint8Array(slots.length * per);
    if (this.fd === undefined) {
      const mem = this.memory ?? new Uint8Array(0);
      for (let j = 0; j < slots.length; j++) out.set(mem.subarray((slots[j] as number) * per, ((slots[j] as number) + 1) * per), j * per);
      return out;
    }
    const gap = Math.max(1, Math.floor(SPAN_GAP_BYTES / per));
    let span = Buffer.allocUnsafe(0);
    for (let j = 0; j < slots.length; ) {
      const first = slots[j] as number;
      let k = j + 1;
      while (k < slots.length && (slots[k] as number) - (slots[k - 1] as number) <= gap && (slots[k] as number) - first < MAX_SPAN_RECORDS) k++;
      const last = slots[k - 1] as number;
      const bytes = (last - first + 1) * per;
      if (k - j === last - first + 1) {
        // Every record of the span is wanted: read straight into place.
        readRecords(this.fd, out.subarray(j * per, j * per + bytes), first * per);
      } else {
        if (span.byteLength < bytes) span = Buffer.allocUnsafe(bytes);
        readRecords(this.fd, span.subarray(0, bytes), first * per);
        for (let i = j; i < k; i++) {
          const from = ((slots[i] as number) - first) * per;
          out.set(span.subarray(from, from + per), i * per);
        }
      }
      j = k;
    }
    return out;
  }

  /** Records `from` to `from + count - 1`, back to back. */
  readRange(from: number, count: number): Uint8Array {
    const per = this.recordBytes;
    if (this.fd === undefined) return (this.memory ?? new Uint8Array(0)).slice(from * per, (from + count) * per);
    const out = new Uint8Array(count * per);
    readRecords(this.fd, out, from * per);
    return out;
  }

  /** Drops every record (the next writes start over). */
  reset(): void {
    if (this.fd !== undefined) fs.ftruncateSync(this.fd, 0);
    this.memory = undefined;
    this.written = 0;
  }

  /** What this process holds for the records: nothing while they are in the file. */
  get heldBytes(): number {
    return this.memory?.byteLength ?? 0;
  }

  /** Where the records are, or undefined when memory holds them (the tests look). */
  get path(): string | undefined {
    return this.file;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    if (this.file) removeQuietly(this.file);
    this.file = undefined;
    this.memory = undefined;
    this.written = 0;
  }

  private open(): void {
    if (this.fd !== undefined || this.memory) return;
    for (const dir of [...this.dirs, os.tmpdir()]) {
      const file = path.join(dir, this.name);
      try {
        this.fd = fs.openSync(file, 'w+', FILE_MODE);
        this.file = file;
        return;
      } catch {
        // The next folder, or memory.
      }
    }
  }
}

/** Unwanted bytes a read may take in between wanted records rather than make another call. */
const SPAN_GAP_BYTES = 4096;
/** At most this many records a read, so its scratch stays small. */
const MAX_SPAN_RECORDS = 4096;

function readRecords(fd: number, into: Uint8Array, at: number): void {
  const got = readFully(fd, into, at);
  if (got < into.byteLength) throw new Error(`the vector scratch file ends ${into.byteLength - got} bytes short`);
}
