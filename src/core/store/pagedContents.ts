import { ChunkCopies } from './chunkCopies';
import { ChunkReader, type ChunkResult } from './chunkReader';
import { ChunkEviction } from './chunkEviction';
import { ChunkSlots } from './chunkSlots';
import { ChunkSpill } from './chunkSpill';
import type { PagedFrame } from './pagedFrame';
import { ReadOrder } from './hotChunks';
import { ioError } from './damagedRead';
import { FreePageCleaner, snapshotFreeList } from './freePages';

/** SQLite never reads or writes more than one page (at most 64 KB) of the main database at once. */
const MAX_PAGE = 65536;

/**
 * Pages of a dropped chunk read straight from its copy before the chunk is loaded whole again.
 * A page is one small read; a load is a read of the whole chunk (64 pages of 4 KB) plus the
 * chunk it pushes out. On a store larger than the cache most dropped chunks are asked for a
 * page or two and then dropped again before a third, so loading each on the first ask was
 * nearly all waste; a chunk asked for this many pages is one a query is walking through. A
 * page asked right after the one before it is a scan walking the file, which reads the whole
 * chunk: it is loaded at once, where page by page it cost a read per page on top of the load.
 */
const PAGES_BEFORE_LOAD = 16;

/**
 * What a checkpoint takes from the contents: per chunk either a reference to the old file's
 * compressed bytes (read, checked and copied one at a time as the new file is written, so a
 * checkpoint never holds the whole file) or the new bytes: a copy, or for a checkpoint that
 * runs before SQLite writes again, the live chunk itself.
 */
export interface Capture {
  size: number;
  chunkBytes: number;
  /** The file the unchanged chunks come from; it stays open until the contents are rebased. */
  frame: PagedFrame;
  parts: ({ index: number; hash: Buffer } | { index: number; raw: Buffer; version: number } | { index: number; slot: number; version: number })[];
  /** An unchanged chunk's compressed bytes from `frame`, checked against its hash. */
  readCompressed(index: number): Buffer;
  /** A changed chunk's bytes from the spill file (chunkSpill.ts), `length` of them, into `into` when given; read once, after which the spill may reuse the slot. */
  readSpilled(slot: number, length: number, into?: Buffer): Buffer;
  /** Called once the capture is written or dropped: the spill may reuse the slots it did not read. */
  done(): void;
}

/** What the contents hold and did, for memory_status and the bench. */
export interface CacheStats {
  /** Chunks held decompressed now, and their bytes. */
  loadedChunks: number;
  loadedBytes: number;
  /** Chunks written since the last checkpoint, and of them those held only in memory (never evicted). */
  dirtyChunks: number;
  unsavedChunks: number;
  /** Chunks written since the last checkpoint whose bytes are in the spill file (evictable), and the chunks written there so far. */
  spilledChunks: number;
  spillWrites: number;
  /** The spill file's length: the slots it holds, live or waiting for a checkpoint to read them. */
  spillFileBytes: number;
  /** The most bytes held decompressed at once; Infinity when unbounded. */
  cacheBytes: number;
  /** Clean chunks dropped to stay within `cacheBytes`, and chunks read again after that. */
  evictions: number;
  reloads: number;
  /** Dropped clean chunks with an uncompressed copy on disk now, reloads served by one, and pages read from one without a reload. */
  copiedChunks: number;
  copyReads: number;
  copyPageReads: number;
}

/**
 * The database file's contents for sql.js's in-memory file system, read on demand. That file
 * system keeps a file's bytes in one object and only ever calls `subarray(start, end)` to read,
 * `set(bytes, position)` to write and `length` to decide whether a write fits; so this object
 * answers those from chunks of the snapshot, decompressed and checked on first touch, and records
 * which chunks were written since the snapshot so a checkpoint recompresses only those.
 *
 * A resize of the file (VACUUM shrinking it) makes the file system copy the whole range into a
 * plain array and keep that instead; the copy is served (every chunk loaded) and the contents mark
 * themselves `detached`, after which a checkpoint must export the database instead.
 */
export class PagedContents {
  /** Large enough that every write fits: the file system never reallocates and copies. */
  readonly length = Number.MAX_SAFE_INTEGER;
  /** The file's logical size: the snapshot's, grown by writes past it. */
  size: number;
  detached = false;
  /** The first chunk that failed its check; once set, the database must be rebuilt. */
  damage: Error | undefined;
  private readonly chunks: (Buffer | undefined)[] = [];
  /** How many chunks `chunks` holds. */
  private resident = 0;
  /** Which clean chunk goes when the cache is full (chunkEviction.ts: a scan larger than the cache does not empty it). */
  private readonly eviction: ChunkEviction;
  /** Chunks ever evicted, so a load of one counts as a reload. */
  private evicted = new Uint8Array(0);
  /** Per chunk, the pages read from its copy since it was last dropped (PAGES_BEFORE_LOAD). */
  private pagesFromCopy = new Uint8Array(0);
  /** Where the last read ended: a read starting there continues a scan. */
  private lastReadEnd = -1;
  private evictions = 0;
  private reloads = 0;
  /**
   * Where the chunks' buffers come from (chunkSlots.ts): an evicted chunk's slot serves the next
   * load, and slabs emptied by a smaller cache go back to the kernel. Nothing keeps a view of an
   * evicted chunk: reads copy out of `subarray` at once, and a capture only refers to written
   * chunks, which are never evicted while it is written.
   */
  private readonly slots: ChunkSlots;
  /** Bumped on each write into a chunk; a checkpoint compares it to know what changed meanwhile. */
  private readonly versions: number[] = [];
  private readonly dirty = new Set<number>();
  /** Of `dirty`, the chunks whose bytes are only in memory; the others are in the spill too. */
  private readonly unsaved = new Set<number>();
  /** A written chunk's slot in the spill, while the slot holds its current bytes: such a chunk can be evicted and loaded again from there. */
  private readonly slotOf = new Map<number, number>();
  private readonly spill: ChunkSpill | undefined;
  /** Uncompressed copies of clean chunks the cache dropped (chunkCopies.ts). */
  private readonly copies: ChunkCopies | undefined;
  /** Which free pages may still hold deleted bytes; a capture zeroes them (freePages.ts). */
  private readonly freePages = new FreePageCleaner();
  /** The read-ahead's worker while it runs; a query needing a chunk first takes what it finished. */
  private reader: ChunkReader | undefined;
  /** Chunks a query had to decompress itself, on the main thread, because no read-ahead had them yet. */
  syncLoads = 0;
  /** Chunks the worker decompressed that this thread had loaded meanwhile (wasted work; the claims keep it at zero). */
  duplicateLoads = 0;
  /** The first chunks SQLite asked for, and the order the read-ahead takes (hotChunks.ts). */
  readonly readOrder: ReadOrder;

  constructor(
    private frame: PagedFrame,
    private readonly onDamage: (err: Error) => void = () => undefined,
    /** Chunk 0 when the opener already read and checked it. */
    first?: Buffer,
    /**
     * The most decompressed bytes held at once. Chunks read from the snapshot and not written
     * since are dropped past it (a later read loads and checks them again from the same open
     * file, whose bytes never change under this process); written ones stay until a checkpoint
     * makes them clean, which the store does before they fill it (memoryBudget.ts).
     */
    private cacheBytes = Infinity,
    /** Where written chunks go to leave memory before a checkpoint (chunkSpill.ts); without one they stay until a checkpoint. */
    spillFile?: string,
    /** Where uncompressed copies of dropped clean chunks go (chunkCopies.ts); without one a reload decompresses. */
    copyFile?: string,
  ) {
    this.spill = spillFile ? new ChunkSpill(spillFile, frame.chunkBytes) : undefined;
    this.copies = copyFile ? new ChunkCopies(copyFile, frame.chunkBytes) : undefined;
    this.size = frame.size;
    this.readOrder = new ReadOrder(frame.count);
    this.eviction = new ChunkEviction(cacheBytes / frame.chunkBytes);
    this.slots = new ChunkSlots(frame.chunkBytes);
    if (first && first.length === frame.rawLength(0)) this.insert(0, this.placed(this.slotFor(0), first));
  }

  get chunkBytes(): number {
    return this.frame.chunkBytes;
  }

  /** How many chunks the snapshot file read now holds. */
  get snapshotChunks(): number {
    return this.frame.count;
  }

  get loadedChunks(): number {
    return this.resident;
  }

  get dirtyChunks(): number {
    return this.dirty.size;
  }

  /** Bytes written since the last checkpoint that only memory holds, in whole chunks: they cannot be evicted until spilled or checkpointed. */
  get dirtyBytes(): number {
    return this.unsaved.size * this.chunkBytes;
  }

  get cacheStats(): CacheStats {
    return {
      loadedChunks: this.resident,
      loadedBytes: this.resident * this.chunkBytes,
      dirtyChunks: this.dirty.size,
      unsavedChunks: this.unsaved.size,
      spilledChunks: this.slotOf.size,
      spillWrites: this.spill?.writes ?? 0,
      spillFileBytes: (this.spill?.slotCount ?? 0) * this.chunkBytes,
      cacheBytes: this.cacheBytes,
      evictions: this.evictions,
      reloads: this.reloads,
      copiedChunks: this.copies?.size ?? 0,
      copyReads: this.copies?.reads ?? 0,
      copyPageReads: this.copies?.partReads ?? 0,
    };
  }

  /**
   * Writes the chunks only memory holds to the spill file, after which they can be evicted like
   * clean ones. False when there is no spill or it cannot be written (a full disk): they then
   * stay in memory until a checkpoint.
   */
  spillUnsaved(): boolean {
    for (const i of this.unsaved) if (!this.writeBack(i)) return false;
    return true;
  }

  /** Writes chunk i, written since the last checkpoint, to the spill file; false when it cannot. */
  private writeBack(i: number): boolean {
    const chunk = this.chunks[i];
    const slot = chunk && this.spill?.put(chunk);
    if (slot === undefined) {
      // A full disk: the copies' space goes back first, for the journal and the checkpoint that must now follow.
      if (this.spill?.failed) this.copies?.dropAll();
      return false;
    }
    this.slotOf.set(i, slot);
    this.unsaved.delete(i);
    return true;
  }

  /**
   * Whether chunk i can leave memory: loading it again gives the same bytes, from the snapshot
   * (not written since) or the spill file (written there since it was last written), or it is
   * written back to the spill on the way out.
   */
  private evictable(i: number): boolean {
    if (this.unsaved.has(i)) return !!this.spill && !this.spill.failed;
    return this.slotOf.has(i) || (!this.dirty.has(i) && i < this.frame.count);
  }

  /** A clean chunk the cache drops leaves a copy (chunkCopies.ts); none once the spill failed, since a full disk needs the space. */
  private keepCopy(i: number, chunk: Buffer): void {
    if (this.copies && !this.spill?.failed && !this.dirty.has(i) && i < this.frame.count) this.copies.keep(i, chunk, this.evicted[i] === 1);
  }

  /**
   * A clean chunk dropped earlier, from its copy; undefined when it has none any more (making
   * room may have dropped it) or it cannot be read, and the snapshot serves it.
   */
  private loadCopy(i: number, copies: ChunkCopies): Buffer | undefined {
    const into = this.slotFor(i);
    const bytes = copies.read(i, into);
    if (!bytes) {
      this.slots.give(into);
      return undefined;
    }
    this.reloads++;
    const data = this.placed(into, bytes);
    this.insert(i, data);
    return data;
  }

  /** Why the spill file could not be written, once that happened. */
  get spillFailure(): Error | undefined {
    return this.spill?.failed;
  }

  /** Chunk i's slot no longer holds its bytes (it was written, or a checkpoint saved it). */
  private dropSlot(i: number): void {
    const slot = this.slotOf.get(i);
    if (slot === undefined) return;
    this.slotOf.delete(i);
    this.spill?.release(slot);
  }

  /** Chunks the cache has room for now: what the read-ahead may still decompress. */
  private get room(): number {
    return this.cacheBytes === Infinity ? Infinity : Math.max(0, Math.floor(this.cacheBytes / this.chunkBytes) - this.resident);
  }

  /**
   * A new limit for the cache (the process's other parts reserved or released memory,
   * memoryBudget.ts): past it, clean chunks are dropped now, as a load would drop them.
   */
  limitCache(bytes: number): void {
    this.cacheBytes = bytes;
    this.eviction.resize(bytes / this.chunkBytes);
    if (this.resident * this.chunkBytes > bytes) {
      this.evictFor(-1, 0);
      this.slots.compact(this.chunks);
    }
  }

  /**
   * A slot to load chunk i into: while the cache is full, clean chunks are dropped first (never i
   * itself), so the slot is one of theirs rather than new memory.
   */
  private slotFor(i: number): Buffer {
    if (!this.chunks[i] && this.resident >= 1 && (this.resident + 1) * this.chunkBytes > this.cacheBytes) this.evictFor(i, 1);
    return this.slots.take();
  }

  /** `slot` holding `bytes` (a chunk's database bytes, possibly decompressed into it already), zeroed past them. */
  private placed(slot: Buffer, bytes: Uint8Array): Buffer {
    if (bytes.buffer !== slot.buffer || bytes.byteOffset !== slot.byteOffset) slot.set(bytes.subarray(0, slot.length));
    if (bytes.length < slot.length) slot.fill(0, bytes.length);
    return slot;
  }

  /** Keeps chunk i in `slot` (from slotFor). */
  private insert(i: number, slot: Buffer): void {
    const old = this.chunks[i];
    this.chunks[i] = slot;
    if (old) {
      if (old !== slot) this.slots.give(old);
      return;
    }
    this.eviction.admitted(i);
    this.resident++;
  }

  /**
   * Drops chunks until one more fits. A chunk may go when loading it again gives the same bytes:
   * from the snapshot this process reads (not written since) or from the spill file; a chunk
   * written since the last checkpoint is first written back there (chunkSpill.ts). Without a
   * spill (or when it cannot be written) written chunks stay and the cache runs over until the
   * next checkpoint.
   */
  private evictFor(keep: number, room: number): void {
    // The write-back runs only for the chunk the policy picks; one that cannot be written stays.
    const evictable = (i: number) => i !== keep && this.chunks[i] !== undefined && this.evictable(i) && (!this.unsaved.has(i) || this.writeBack(i));
    while ((this.resident + room) * this.chunkBytes > this.cacheBytes) {
      const i = this.eviction.victim(evictable);
      if (i === undefined) return;
      this.keepCopy(i, this.chunks[i] as Buffer);
      this.slots.give(this.chunks[i] as Buffer);
      this.chunks[i] = undefined;
      this.resident--;
      this.evictions++;
      if (i >= this.evicted.length) {
        const grown = new Uint8Array(Math.max(i + 1, this.frame.count));
        grown.set(this.evicted);
        this.evicted = grown;
        const pages = new Uint8Array(grown.length);
        pages.set(this.pagesFromCopy);
        this.pagesFromCopy = pages;
      }
      this.evicted[i] = 1;
      this.pagesFromCopy[i] = 0;
    }
  }

  subarray(start: number, end: number): Uint8Array {
    if (end - start > MAX_PAGE) this.detached = true; // a whole-file copy: the file system is replacing us
    const cb = this.chunkBytes;
    const first = Math.floor(start / cb);
    const scanning = start === this.lastReadEnd;
    this.lastReadEnd = end;
    if (end <= (first + 1) * cb) return (scanning ? undefined : this.pageFromCopy(first, start - first * cb, end - start)) ?? this.chunk(first).subarray(start - first * cb, end - first * cb);
    const out = new Uint8Array(Math.max(0, end - start));
    for (let at = start; at < end; ) {
      const i = Math.floor(at / cb);
      const stop = Math.min(end, (i + 1) * cb);
      out.set(this.chunk(i).subarray(at - i * cb, stop - i * cb), at - start);
      at = stop;
    }
    return out;
  }

  set(src: ArrayLike<number>, position = 0): void {
    const cb = this.chunkBytes;
    const bytes = src instanceof Uint8Array ? src : Uint8Array.from(src);
    for (let done = 0; done < bytes.length; ) {
      const at = position + done;
      const i = Math.floor(at / cb);
      const n = Math.min(bytes.length - done, (i + 1) * cb - at);
      this.chunk(i).set(bytes.subarray(done, done + n), at - i * cb);
      this.freePages.wrote(at, n);
      this.versions[i] = (this.versions[i] ?? 0) + 1;
      this.dirty.add(i);
      this.unsaved.add(i);
      this.dropSlot(i);
      this.copies?.drop(i);
      done += n;
    }
    this.size = Math.max(this.size, position + bytes.length);
  }

  /**
   * `length` bytes of dropped chunk i from `offset`, read from its copy without loading the
   * chunk, until it has been asked for PAGES_BEFORE_LOAD pages; undefined then, or when it is
   * held or has no copy, and `chunk` serves it. The copy holds the chunk's bytes as they were when
   * dropped, and a chunk's copy goes when it is written (`set`), so the page is the chunk's.
   */
  private pageFromCopy(i: number, offset: number, length: number): Buffer | undefined {
    if (this.chunks[i] || !this.copies || this.damage || (this.pagesFromCopy[i] ?? PAGES_BEFORE_LOAD) >= PAGES_BEFORE_LOAD || !this.copies.has(i)) return undefined;
    const page = this.copies.readPart(i, offset, length);
    if (!page) return undefined;
    this.pagesFromCopy[i] = (this.pagesFromCopy[i] as number) + 1;
    this.readOrder.asking(i);
    return page;
  }

  /** Chunk i at full chunk size, loaded from the snapshot (checked) or zeroed past its end. */
  private chunk(i: number): Buffer {
    this.readOrder.asking(i);
    const have = this.chunks[i];
    if (have) {
      this.eviction.touched(i);
      return have;
    }
    const slot = this.slotOf.get(i);
    if (slot !== undefined) return this.loadSpilled(i, slot);
    const copied = this.copies?.has(i) && !this.damage ? this.loadCopy(i, this.copies) : undefined;
    if (copied) return copied;
    if (this.reader && (this.versions[i] ?? 0) === 0) {
      this.reader.drain();
      const ready = this.chunks[i];
      if (ready) return ready;
      if (this.reader.takeOrClaim(i, () => this.chunks[i] !== undefined)) return this.chunks[i] as Buffer;
    }
    if (this.damage) throw ioError(this.damage.message);
    const into = this.slotFor(i);
    let data: Buffer;
    if (i < this.frame.count) {
      try {
        this.syncLoads++;
        if (this.evicted[i]) this.reloads++;
        data = this.placed(into, this.frame.load(i, into));
      } catch (err) {
        this.slots.give(into);
        this.damage = err instanceof Error ? err : new Error(String(err));
        this.onDamage(this.damage);
        throw ioError(this.damage.message);
      }
    } else {
      data = into.fill(0);
      this.dirty.add(i); // a new part of the file: the snapshot has nothing to copy for it
      this.unsaved.add(i);
    }
    this.insert(i, data);
    return data;
  }

  /** A written chunk evicted after it was spilled: read back from the spill file (a failed read is damage, as for a snapshot chunk). */
  private loadSpilled(i: number, slot: number): Buffer {
    if (this.damage) throw ioError(this.damage.message);
    const into = this.slotFor(i);
    let data: Buffer;
    try {
      if (this.evicted[i]) this.reloads++;
      data = this.placed(into, (this.spill as ChunkSpill).read(slot, this.chunkBytes, into));
    } catch (err) {
      this.slots.give(into);
      this.reportDamage(err instanceof Error ? err : new Error(String(err)));
      throw ioError((this.damage as unknown as Error).message);
    }
    this.insert(i, data);
    return data;
  }

  /**
   * Whether a chunk the read-ahead decompressed may be kept: never one this process wrote (its
   * bytes are newer than any snapshot's, and a read-ahead still reading a file a checkpoint
   * replaced would bring back the old ones), nor one held already.
   */
  private acceptsReadAhead(i: number): boolean {
    return !this.chunks[i] && (this.versions[i] ?? 0) === 0 && !this.damage && this.room > 0;
  }

  /** A chunk's compressed bytes for a checkpoint to copy; damage found here is reported like a failed read. */
  private readCompressed(i: number): Buffer {
    try {
      return this.frame.readCompressed(i);
    } catch (err) {
      this.reportDamage(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }

  /** Whether `file` still names the snapshot these contents read from. */
  readsFrom(file: string): boolean {
    return this.frame.isAt(file);
  }

  /**
   * Decompresses the chunks no query has read yet, one at a time on the thread pool, and keeps
   * them (unless SQLite read the chunk meanwhile): a long-lived process soon holds the whole
   * database as an eager open would, without the open waiting for it, and damage anywhere in the
   * file is found early. Stops at the first damaged chunk (reported as a failed read would be)
   * or when `wanted` says so. A checkpoint that moves the contents to its new file does not stop
   * it: a chunk nobody read is the same in both files.
   */
  async readAhead(wanted: () => boolean = () => true): Promise<void> {
    if (await this.readAheadInWorker(wanted)) return;
    const order = this.aheadOrder();
    for (let k = 0; k < order.length; k++) {
      const i = order[k] as number;
      if (!wanted() || this.damage || this.room === 0) return;
      const frame = this.frame;
      if (this.chunks[i] || i >= frame.count) continue;
      let raw: Buffer | undefined;
      try {
        raw = await frame.loadInBackground(i);
      } catch (err) {
        if (frame === this.frame && !this.chunks[i]) this.reportDamage(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (!raw) {
        if (frame === this.frame) return; // closed with the store
        k--; // the checkpoint closed that file: this chunk again, from the new one
        continue;
      }
      if (this.acceptsReadAhead(i)) this.insert(i, this.placed(this.slotFor(i), raw));
    }
  }

  /** The chunks not loaded yet, in the order the read-ahead takes them (hotChunks.ts). */
  private aheadOrder(): number[] {
    return this.readOrder.order(this.frame.count, (i) => this.chunks[i] !== undefined, this.room);
  }

  /**
   * Takes a few chunks the read-ahead's worker has finished, for a caller between two operations:
   * taken a few at a time, they never pile up for one query to take all at once (each is 1 MB
   * of new memory, and a pile of them sets off a full garbage collection in that query).
   */
  takeReadAhead(limit = 2): void {
    this.reader?.drain(limit);
  }

  /**
   * The read-ahead in a worker thread (chunkReader.ts), same order and checks; false when no
   * worker could start on this file, and the thread pool does it instead. The worker reads the
   * file it was started on to the end even when a checkpoint moves the contents to a new file
   * meanwhile: a chunk nobody read is the same in both.
   */
  private async readAheadInWorker(wanted: () => boolean): Promise<boolean> {
    const frame = this.frame;
    const jobs = [];
    for (const i of this.aheadOrder()) {
      const e = frame.entries[i];
      if (e) jobs.push({ index: i, at: e.at, length: e.length, hash: e.hash, raw: frame.rawLength(i) });
    }
    if (jobs.length === 0) return true;
    const accept = (r: ChunkResult) => {
      if (!wanted() || this.damage) return reader?.stop();
      if ('error' in r) return this.chunks[r.index] ? undefined : this.reportDamage(new Error(r.error));
      if (this.chunks[r.index]) this.duplicateLoads++;
      // Queries may have filled the cache meanwhile: a chunk without room is dropped, not let in to evict one they use.
      else if (this.acceptsReadAhead(r.index)) this.insert(r.index, this.placed(this.slotFor(r.index), new Uint8Array(r.bytes)));
    };
    const reader = ChunkReader.start(frame.file, (fd) => frame.sameFileAs(fd), jobs, accept);
    if (!reader) return false;
    this.reader = reader;
    try {
      await reader.finished;
    } finally {
      if (this.reader === reader) this.reader = undefined;
    }
    return true;
  }

  /** Reports damage the background check found in a chunk no query has read yet. */
  reportDamage(err: Error): void {
    if (this.damage) return;
    this.damage = err;
    this.onDamage(err);
  }

  /**
   * What a checkpoint writes, taken synchronously at a moment the database file is consistent
   * (no transaction open): unchanged chunks as the old file's compressed bytes (checked), changed
   * ones by their slot in the spill file or, for `copy: false` (a checkpoint that runs before
   * SQLite writes again), the live chunk itself. With `copy` (a checkpoint in the background,
   * while SQLite may write on) the changed chunks held only in memory are spilled first, so the
   * capture holds no copy of them; without a spill they are copied.
   */
  capture(options: { copy?: boolean } = {}): Capture {
    const copy = options.copy ?? true;
    // Zeroing a free page loads and writes its chunk; after many merges that is many chunks, so
    // they go to the spill as they pile up, as written chunks do between checkpoints.
    let zeros = new Uint8Array(0);
    this.freePages.beforeSnapshot(
      (offset, length) => Buffer.from(this.subarray(offset, offset + length)),
      this.size,
      () => snapshotFreeList(this.frame),
      (offset, length) => {
        if (zeros.length < length) zeros = new Uint8Array(length);
        this.set(zeros.subarray(0, length), offset);
        if (this.unsaved.size * this.chunkBytes > this.cacheBytes / 4) this.spillUnsaved();
      },
    );
    if (copy) this.spillUnsaved();
    const cb = this.chunkBytes;
    const count = Math.ceil(this.size / cb);
    const parts: Capture['parts'] = [];
    for (let i = 0; i < count; i++) {
      const rawLength = Math.min(cb, this.size - i * cb);
      const chunk = this.chunks[i];
      const version = this.versions[i] ?? 0;
      const changed = this.dirty.has(i) || i >= this.frame.count || this.frame.rawLength(i) !== rawLength;
      const slot = this.slotOf.get(i);
      if (changed && slot !== undefined && (copy || !chunk)) {
        parts.push({ index: i, slot, version });
      } else if (changed && chunk) {
        const raw = chunk.subarray(0, rawLength);
        parts.push({ index: i, raw: copy ? Buffer.from(raw) : raw, version });
      } else if (!changed) {
        const e = this.frame.entries[i];
        parts.push({ index: i, hash: Buffer.from(e?.hash ?? []) });
      } else {
        parts.push({ index: i, raw: Buffer.alloc(rawLength), version });
      }
    }
    const frame = this.frame;
    const slots: number[] = [];
    for (const p of parts) if ('slot' in p) slots.push(p.slot);
    const reader = this.spill?.readerOf(slots);
    return {
      size: this.size,
      chunkBytes: cb,
      frame,
      parts,
      readCompressed: (i) => (frame === this.frame ? this.readCompressed(i) : frame.readCompressed(i)),
      readSpilled: (slot, length, into) => {
        if (!reader) throw new Error('the capture holds no spilled chunk');
        return reader.read(slot, length, into);
      },
      done: () => reader?.done(),
    };
  }

  /**
   * After the capture was written as `next`: reads come from the new file from now on, and a
   * chunk is clean again unless it was written after the capture (its slot in the spill is then
   * given back: the new file has its bytes). Returns the previous file, for the caller to close.
   */
  rebase(next: PagedFrame, written: Capture): PagedFrame {
    const previous = this.frame;
    this.frame = next;
    for (const part of written.parts) {
      if ('hash' in part || (this.versions[part.index] ?? 0) !== part.version) continue;
      this.dirty.delete(part.index);
      this.unsaved.delete(part.index);
      this.dropSlot(part.index);
    }
    return previous;
  }

  close(): void {
    this.reader?.stop();
    this.frame.close();
    this.spill?.close();
    this.copies?.close();
  }
}
