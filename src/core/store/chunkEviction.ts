/**
 * Which decompressed snapshot chunk the bounded cache drops next (pagedContents.ts): a "2Q"
 * policy, so that one query reading a table larger than the cache does not push out the chunks
 * every other query keeps coming back to.
 *
 * A plain clock (least recently used, approximately) drops the oldest chunk: a scan over more
 * chunks than the cache holds then evicts everything, the FTS index's leaves and the small
 * tables included, and the next search decompresses them all again. On a store that is not
 * compacted a table's pages lie all over the file, so a regex search that must read every inline
 * event (a literal no index can narrow) touches nearly every chunk, and repeated it emptied the
 * cache on each call.
 *
 * Here a chunk enters on probation, in arrival order, and is promoted to the main part only when
 * it is asked for again later: by a read long enough after it arrived that it is not the same
 * query walking through it (more than `window` other chunks arrived in between), or by being
 * loaded again soon after probation dropped it (its id is remembered for `ghosts` evictions).
 * (The chunks the read-ahead loaded at open are promoted by the first queries that read them.)
 * Probation holds at most a quarter of the cache while the main part has chunks to give: a scan
 * recycles those slots, first in first out, and the main part keeps the rest; it gives up a
 * chunk, by clock, only when probation is within its share.
 *
 * Only the choice of which clean chunk to drop depends on this: a dropped chunk is read again,
 * checked, from the same file, so the policy changes the time of a query, never its answer.
 */
export class ChunkEviction {
  /** Per chunk: 0 not held, 1 on probation, 2 in the main part. */
  private part = new Uint8Array(0);
  /** Clock marks of the main part. */
  private used = new Uint8Array(0);
  /** Per chunk, the arrival count when it last arrived (probation's order and the test of a later read). */
  private arrivedAt = new Float64Array(0);
  /** Per chunk, 1 + the probation eviction count when probation last dropped it; 0 never. */
  private droppedAt = new Float64Array(0);
  /** Probation's arrival order: chunk ids with their arrival count (an entry is stale once the chunk left or came again). */
  private queueIds: number[] = [];
  private queueAt: number[] = [];
  private queueHead = 0;
  private arrivals = 0;
  private probationDrops = 0;
  private onProbation = 0;
  private inMain = 0;
  private hand = 0;
  private probationMax = 1;
  private window = 1;
  private ghosts = 1;

  /** `capacity`: how many chunks the cache holds (Infinity: it never evicts, and only the bookkeeping runs). */
  constructor(capacity: number) {
    this.resize(capacity);
  }

  /** The cache's new size in chunks (the budget gave memory to another part of the process, or took it back). */
  resize(capacity: number): void {
    const c = Number.isFinite(capacity) ? Math.max(1, Math.floor(capacity)) : Number.MAX_SAFE_INTEGER;
    this.probationMax = Math.max(1, Math.floor(c / 4));
    this.window = Math.max(1, Math.floor(this.probationMax / 2));
    this.ghosts = Math.max(1, Math.floor(c / 2));
  }

  /** Chunk i is held now (just loaded or written into a new place). */
  admitted(i: number): void {
    this.grow(i);
    this.arrivals++;
    this.arrivedAt[i] = this.arrivals;
    const dropped = this.droppedAt[i] as number;
    if (dropped > 0 && this.probationDrops - dropped < this.ghosts) {
      this.part[i] = 2;
      this.used[i] = 1;
      this.inMain++;
      return;
    }
    this.part[i] = 1;
    this.onProbation++;
    this.queueIds.push(i);
    this.queueAt.push(this.arrivals);
  }

  /** A read or write of held chunk i. Runs on every page SQLite reads, so it does as little as it can. */
  touched(i: number): void {
    const part = this.part[i];
    if (part === 2) this.used[i] = 1;
    else if (part === 1 && this.arrivals - (this.arrivedAt[i] as number) > this.window) this.promote(i);
  }

  /**
   * The chunk to drop, which is then no longer held, or undefined when none of the held chunks
   * may go (`evictable` says which may: clean ones of the snapshot, not the one being loaded).
   */
  victim(evictable: (i: number) => boolean): number | undefined {
    const fromProbation = this.onProbation > this.probationMax || this.inMain === 0;
    const first = fromProbation ? this.fromProbation(evictable) : this.fromMain(evictable);
    if (first !== undefined) return first;
    return fromProbation ? this.fromMain(evictable) : this.fromProbation(evictable);
  }

  /** Chunks on probation and in the main part now (the tests look). */
  get parts(): { probation: number; main: number } {
    return { probation: this.onProbation, main: this.inMain };
  }

  private promote(i: number): void {
    this.part[i] = 2;
    this.used[i] = 1;
    this.onProbation--;
    this.inMain++;
  }

  /** The oldest chunk on probation that may go; one that may not (written since) has proved itself and joins the main part. */
  private fromProbation(evictable: (i: number) => boolean): number | undefined {
    while (this.queueHead < this.queueIds.length) {
      const i = this.queueIds[this.queueHead] as number;
      const at = this.queueAt[this.queueHead] as number;
      this.queueHead++;
      if (this.part[i] !== 1 || this.arrivedAt[i] !== at) continue; // left probation, or came again later
      if (!evictable(i)) {
        this.promote(i);
        continue;
      }
      this.part[i] = 0;
      this.onProbation--;
      this.probationDrops++;
      this.droppedAt[i] = this.probationDrops;
      this.compactQueue();
      return i;
    }
    this.compactQueue();
    return undefined;
  }

  /** Clock over the main part: two turns, the first of which may only clear the marks. */
  private fromMain(evictable: (i: number) => boolean): number | undefined {
    const n = this.part.length;
    for (let steps = 0; steps < 2 * n && this.inMain > 0; steps++) {
      const i = this.hand;
      this.hand = i + 1 >= n ? 0 : i + 1;
      if (this.part[i] !== 2 || !evictable(i)) continue;
      if (this.used[i]) {
        this.used[i] = 0;
        continue;
      }
      this.part[i] = 0;
      this.inMain--;
      return i;
    }
    return undefined;
  }

  private compactQueue(): void {
    if (this.queueHead < 1024 || this.queueHead * 2 < this.queueIds.length) return;
    this.queueIds = this.queueIds.slice(this.queueHead);
    this.queueAt = this.queueAt.slice(this.queueHead);
    this.queueHead = 0;
  }

  private grow(i: number): void {
    if (i < this.part.length) return;
    const size = Math.max(i + 1, this.part.length * 2, 64);
    this.part = grown(this.part, new Uint8Array(size));
    this.used = grown(this.used, new Uint8Array(size));
    this.arrivedAt = grown(this.arrivedAt, new Float64Array(size));
    this.droppedAt = grown(this.droppedAt, new Float64Array(size));
  }
}

/** `larger` holding `old`'s values at their indexes. */
function grown<T extends Uint8Array | Float64Array>(old: T, larger: T): T {
  larger.set(old);
  return larger;
}
