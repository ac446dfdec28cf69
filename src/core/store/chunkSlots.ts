/**
 * glibc's malloc serves an allocation below its mmap threshold from the brk heap, and raises that
 * threshold (up to 32 MiB on 64-bit) each time it frees a block it had mapped. So once a few
 * chunk-sized buffers have come and gone, every new chunk buffer lands in the brk heap among the
 * process's small allocations, and when the cache drops chunks their memory is free but not
 * returned to the kernel: the process keeps both the chunks it dropped and whatever took their
 * share (docs/performance.md, MALLOCMEM). A slab larger than the threshold's ceiling is always a
 * mapping of its own, which goes back to the kernel as a whole when it is freed; so the chunk
 * cache cuts its buffers out of such slabs, reuses their slots, and gives an emptied slab back.
 */
const SLAB_MIN_BYTES = 32 * 1024 * 1024;

export interface Slab {
  buffer: ArrayBuffer;
  /** Slot numbers not handed out, the lowest last (taken first: `pop`). */
  free: number[];
  used: number;
}

/**
 * Buffers of one chunk's size for the chunk cache (pagedContents.ts). A slot handed out by
 * `take` is the caller's until it hands it back with `give`; the caller must hold no view of it
 * afterwards, since the next `take` may return the same memory.
 */
export class ChunkSlots {
  private readonly slabs: Slab[] = [];
  private readonly slabOf = new Map<ArrayBuffer, Slab>();
  readonly perSlab: number;

  constructor(readonly chunkBytes: number) {
    this.perSlab = Math.floor(SLAB_MIN_BYTES / chunkBytes) + 1;
  }

  /** Bytes of slabs held (mapped; the kernel counts only the pages ever written). */
  get slabBytes(): number {
    return this.slabs.length * this.perSlab * this.chunkBytes;
  }

  /** Slots handed out now. */
  get used(): number {
    let n = 0;
    for (const s of this.slabs) n += s.used;
    return n;
  }

  /**
   * A slot, from the fullest slab that has one free (never `avoid`, the slab `compact` empties), so
   * that the emptiest ones can empty out. Its bytes are whatever its last holder left.
   */
  take(avoid?: Slab): Buffer {
    let best: Slab | undefined;
    for (const s of this.slabs) if (s !== avoid && s.free.length > 0 && (!best || s.used > best.used)) best = s;
    const slab = best ?? this.newSlab();
    const slot = slab.free.pop() as number;
    slab.used++;
    return Buffer.from(slab.buffer, slot * this.chunkBytes, this.chunkBytes);
  }

  /** Hands a slot back; a buffer `take` did not hand out is left to the garbage collector. A slab left empty is released unless it is the last. */
  give(buf: Buffer): void {
    const slab = this.slabOf.get(buf.buffer as ArrayBuffer);
    if (!slab || buf.length !== this.chunkBytes || buf.byteOffset % this.chunkBytes !== 0) return;
    slab.free.push(buf.byteOffset / this.chunkBytes);
    slab.used--;
    if (slab.used === 0 && this.slabs.length > 1) this.release(slab);
  }

  /**
   * After the cache shrank: moves the chunks of the emptiest slabs into free slots of the others
   * as long as that empties a slab, and releases the emptied ones. `held` is the cache's chunks by
   * index; a moved chunk is replaced there by its new slot.
   */
  compact(held: (Buffer | undefined)[]): void {
    for (;;) {
      const byUse = this.slabs.filter((s) => s.used > 0).sort((a, b) => a.used - b.used);
      const emptiest = byUse[0];
      if (!emptiest || byUse.length < 2) return;
      const freeElsewhere = byUse.slice(1).reduce((n, s) => n + s.free.length, 0);
      if (freeElsewhere < emptiest.used) return;
      for (let i = 0; i < held.length; i++) {
        const b = held[i];
        if (!b || b.buffer !== emptiest.buffer) continue;
        const to = this.take(emptiest);
        to.set(b);
        held[i] = to;
        this.give(b);
      }
    }
  }

  private newSlab(): Slab {
    const free: number[] = [];
    for (let k = this.perSlab - 1; k >= 0; k--) free.push(k);
    const slab = { buffer: new ArrayBuffer(this.perSlab * this.chunkBytes), free, used: 0 };
    this.slabs.push(slab);
    this.slabOf.set(slab.buffer, slab);
    return slab;
  }

  private release(slab: Slab): void {
    this.slabs.splice(this.slabs.indexOf(slab), 1);
    this.slabOf.delete(slab.buffer);
  }
}
