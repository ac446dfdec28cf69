/**
 * Which slot holds a key's vector, in two typed arrays instead of a Map of strings: each slot's
 * 32-bit hash of its key, and an open-addressed table of slots (linear probing, at most half
 * full). A key is found by its hash; a slot whose hash matches is checked against the key itself
 * (`keyAt`, read from where the keys are kept), so two keys that share a hash never mix.
 * About 4 bytes a slot plus 8 to 16 for the table, where a Map held the key's string too.
 */
export class KeySlots {
  private hashes = new Uint32Array(0);
  private table = new Uint32Array(0);
  private mask = 0;
  count = 0;

  constructor(private readonly keyAt: (slot: number) => string) {}

  /** The slot of `key`, or undefined. */
  get(key: string): number | undefined {
    if (!this.count) return undefined;
    const h = hashOf(key);
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const entry = this.table[i] as number;
      if (entry === 0) return undefined;
      const slot = entry - 1;
      if (this.hashes[slot] === h && this.keyAt(slot) === key) return slot;
    }
  }

  /** Gives `key` the next slot (the caller knows it has none) and returns it. */
  add(key: string): number {
    const slot = this.count++;
    if (slot >= this.hashes.length) {
      const grown = new Uint32Array(Math.max(1024, this.hashes.length * 2));
      grown.set(this.hashes);
      this.hashes = grown;
    }
    const h = hashOf(key);
    this.hashes[slot] = h;
    if (this.count * 2 > this.table.length) this.rehash(Math.max(2048, this.table.length * 2));
    else this.place(slot, h);
    return slot;
  }

  get byteLength(): number {
    return this.hashes.byteLength + this.table.byteLength;
  }

  private place(slot: number, h: number): void {
    let i = h & this.mask;
    while (this.table[i] !== 0) i = (i + 1) & this.mask;
    this.table[i] = slot + 1;
  }

  private rehash(size: number): void {
    this.table = new Uint32Array(size);
    this.mask = size - 1;
    for (let s = 0; s < this.count; s++) this.place(s, this.hashes[s] as number);
  }
}

/** FNV-1a over the UTF-16 code units. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
