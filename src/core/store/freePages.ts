/**
 * The free pages of an SQLite database file, and what of them may still hold a row's bytes.
 *
 * Connections run `secure_delete = FAST` (sqlite.ts): SQLite zeroes what a delete leaves inside
 * the pages it writes anyway, but a page it frees (an overflow page, a merged FTS4 segment's
 * block) keeps its old bytes. `ON` zeroed those too, inside the transaction, so the in-memory
 * rollback journal held a copy of every freed page, and an FTS4 merge of large segments grew
 * sql.js's wasm heap, which never shrinks, by about half the bytes merged (docs/performance.md,
 * FREEPAGES). The snapshot's promise is kept instead where a snapshot is written: every free page
 * that may hold old bytes is zeroed first (a trunk page of the free list past its entries), so a
 * snapshot never carries what was deleted, nor an older copy of any row.
 */

import type { PagedFrame } from './pagedFrame';

export interface FreeList {
  pageSize: number;
  /** Free pages that hold nothing SQLite reads (1-based page numbers). */
  leaves: number[];
  /** Pages of the free list itself, each with the bytes its entries use; past those it holds nothing SQLite reads. */
  trunks: { page: number; used: number }[];
}

/**
 * The database's free list, read through `read(offset, length)` from a file of `size` bytes;
 * undefined when the file is too small to be a database or its list is not what SQLite writes.
 */
export function freeList(read: (offset: number, length: number) => Uint8Array, size: number): FreeList | undefined {
  if (size < 100) return undefined;
  const header = read(0, 100);
  const raw = (header[16] as number) * 256 + (header[17] as number);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const pages = Math.floor(size / pageSize);
  const total = u32(header, 36);
  const out: FreeList = { pageSize, leaves: [], trunks: [] };
  for (let trunk = u32(header, 32); trunk !== 0; ) {
    // A list longer than its stated count, or a page outside the file, is not one SQLite wrote.
    if (trunk > pages || out.trunks.length + out.leaves.length >= total) return undefined;
    const page = read((trunk - 1) * pageSize, pageSize);
    const count = u32(page, 4);
    if (8 + 4 * count > pageSize) return undefined;
    for (let k = 0; k < count; k++) {
      const leaf = u32(page, 8 + 4 * k);
      if (leaf === 0 || leaf > pages) return undefined;
      out.leaves.push(leaf);
    }
    out.trunks.push({ page: trunk, used: 8 + 4 * count });
    trunk = u32(page, 0);
  }
  return out;
}

/**
 * The free list of a snapshot, read from its file (the chunks are decompressed here, not loaded
 * into any cache); undefined when it cannot be read, and every page free now is then zeroed.
 */
export function snapshotFreeList(frame: PagedFrame): FreeList | undefined {
  const cb = frame.chunkBytes;
  let held: { index: number; data: Buffer } | undefined;
  const read = (offset: number, length: number): Uint8Array => {
    const index = Math.floor(offset / cb);
    if (held?.index !== index) held = { index, data: frame.load(index, Buffer.alloc(cb)) };
    return held.data.subarray(offset - index * cb, offset - index * cb + length);
  };
  try {
    return freeList(read, frame.size);
  } catch {
    return undefined;
  }
}

/** Zeroes in `data` (a whole database file) every free page and every free-list page past its entries. */
export function zeroFreePagesIn(data: Uint8Array): void {
  const list = freeList((offset, length) => data.subarray(offset, offset + length), data.length);
  if (!list) return;
  for (const leaf of list.leaves) data.fill(0, (leaf - 1) * list.pageSize, leaf * list.pageSize);
  for (const t of list.trunks) data.fill(0, (t.page - 1) * list.pageSize + t.used, t.page * list.pageSize);
}

/** A growable set of small non-negative integers. */
class BitSet {
  private bits = new Uint32Array(0);

  has(n: number): boolean {
    return ((this.bits[n >>> 5] ?? 0) & (1 << (n & 31))) !== 0;
  }

  add(n: number): void {
    const w = n >>> 5;
    if (w >= this.bits.length) {
      const grown = new Uint32Array(Math.max(w + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[w] = ((this.bits[w] as number) | (1 << (n & 31))) >>> 0;
  }

  delete(n: number): void {
    const w = n >>> 5;
    if (w < this.bits.length) this.bits[w] = ((this.bits[w] as number) & ~(1 << (n & 31))) >>> 0;
  }

  /** Whether any of from..to-1 is in the set. */
  anyIn(from: number, to: number): boolean {
    for (let n = from; n < to; n++) if (this.has(n)) return true;
    return false;
  }

  /** Adds from..to-1. */
  addRange(from: number, to: number): void {
    for (let n = from; n < to; n++) this.add(n);
  }

  /** Each member, ascending. */
  *[Symbol.iterator](): IterableIterator<number> {
    for (let w = 0; w < this.bits.length; w++) {
      let word = this.bits[w] as number;
      while (word) {
        const low = 31 - Math.clz32(word & -word);
        yield w * 32 + low;
        word = (word & (word - 1)) >>> 0;
      }
    }
  }

  clear(): void {
    this.bits = new Uint32Array(0);
  }
}

function u32(b: Uint8Array, at: number): number {
  return (((b[at] as number) << 24) | ((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number)) >>> 0;
}

/**
 * Which free pages of a paged database file (pagedContents.ts) hold nothing of a row, kept
 * exact between snapshots: a page is clean once this process zeroed it, or when it was free in
 * the snapshot the file was read from (every snapshot is written with its free pages zeroed, and
 * builds before FAST zeroed every page they freed), and stops being clean the moment anything
 * writes inside it. `beforeSnapshot` zeroes what is free now and not clean.
 */
export class FreePageCleaner {
  /** Free pages known to hold nothing (whole), and free-list pages known to hold nothing past their entries. */
  private wholeClean: BitSet | undefined;
  private tailClean: BitSet | undefined;
  /** 512-byte units written since the last `beforeSnapshot` (the smallest page SQLite has). */
  private readonly written = new BitSet();

  /** Every write into the file passes here (PagedContents.set). */
  wrote(position: number, length: number): void {
    if (length > 0) this.written.addRange(Math.floor(position / 512), Math.ceil((position + length) / 512));
  }

  /**
   * Zeroes, through `zero(offset, length)`, every free page that may hold old bytes, at a moment
   * no transaction is open. `read` reads the file now; `readSnapshot`, the snapshot it was read
   * from, used once, the first time, to learn which pages were free (and clean) there.
   */
  beforeSnapshot(read: (offset: number, length: number) => Uint8Array, size: number, readSnapshot: () => FreeList | undefined, zero: (offset: number, length: number) => void): void {
    const list = freeList(read, size);
    if (!this.wholeClean || !this.tailClean) {
      const first = readSnapshot();
      this.wholeClean = new BitSet();
      this.tailClean = new BitSet();
      for (const leaf of first?.leaves ?? []) this.wholeClean.add(leaf);
      for (const t of first?.trunks ?? []) this.tailClean.add(t.page);
    }
    if (list) {
      const units = list.pageSize / 512;
      const touched = (page: number) => this.written.anyIn((page - 1) * units, page * units);
      for (const page of [...this.wholeClean]) if (touched(page)) this.wholeClean.delete(page);
      for (const page of [...this.tailClean]) if (touched(page)) this.tailClean.delete(page);
      for (const leaf of list.leaves) {
        if (this.wholeClean.has(leaf)) continue;
        zero((leaf - 1) * list.pageSize, list.pageSize);
        this.wholeClean.add(leaf);
      }
      for (const t of list.trunks) {
        if (this.tailClean.has(t.page)) continue;
        zero((t.page - 1) * list.pageSize + t.used, list.pageSize - t.used);
        this.tailClean.add(t.page);
      }
    }
    this.written.clear();
  }
}
