import { describe, expect, it } from 'vitest';
import { ChunkSlots } from '../../src/core/store/chunkSlots';

const KB = 1024;

describe('ChunkSlots', () => {
  it('cuts slots out of slabs larger than malloc mmap threshold ceiling and reuses a slot given back', () => {
    const slots = new ChunkSlots(256 * KB);
    expect(slots.perSlab * 256 * KB).toBeGreaterThan(32 * KB * KB);
    const a = slots.take();
    const b = slots.take();
    expect(a.length).toBe(256 * KB);
    expect(a.buffer).toBe(b.buffer);
    expect(b.byteOffset - a.byteOffset).toBe(256 * KB);
    slots.give(a);
    const c = slots.take();
    expect(c.buffer).toBe(a.buffer);
    expect(c.byteOffset).toBe(a.byteOffset);
    expect(slots.used).toBe(2);
    expect(slots.slabBytes).toBe(slots.perSlab * 256 * KB);
  });

  it('ignores a buffer it did not hand out', () => {
    const slots = new ChunkSlots(64 * KB);
    slots.take();
    slots.give(Buffer.alloc(64 * KB));
    expect(slots.used).toBe(1);
  });

  it('releases a slab once emptied, keeping the last one', () => {
    const slots = new ChunkSlots(1024 * KB);
    const held = Array.from({ length: slots.perSlab + 1 }, () => slots.take());
    expect(slots.slabBytes).toBe(2 * slots.perSlab * 1024 * KB);
    slots.give(held.pop() as Buffer); // the second slab's only slot
    expect(slots.slabBytes).toBe(slots.perSlab * 1024 * KB);
    for (const b of held) slots.give(b);
    expect(slots.used).toBe(0);
    expect(slots.slabBytes).toBe(slots.perSlab * 1024 * KB);
  });

  it('compacts the chunks of a shrunk cache into fewer slabs, bytes unchanged', () => {
    const slots = new ChunkSlots(1024 * KB);
    const per = slots.perSlab;
    const held: (Buffer | undefined)[] = Array.from({ length: 3 * per }, (_, i) => slots.take().fill(i % 251));
    expect(slots.slabBytes).toBe(3 * per * 1024 * KB);
    // The cache drops two of every three chunks, scattered over all three slabs.
    for (let i = 0; i < held.length; i++) {
      if (i % 3 === 0) continue;
      slots.give(held[i] as Buffer);
      held[i] = undefined;
    }
    expect(slots.slabBytes).toBe(3 * per * 1024 * KB);
    const before = held.map((b) => b?.[0]);
    slots.compact(held);
    expect(slots.slabBytes).toBe(per * 1024 * KB);
    expect(slots.used).toBe(per);
    expect(held.map((b) => b?.[0])).toEqual(before);
    expect(new Set(held.filter((b) => b).map((b) => (b as Buffer).buffer)).size).toBe(1);
    for (const b of held) if (b) expect(b.every((x) => x === b[0])).toBe(true);
  });
});
