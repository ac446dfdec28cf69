import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkCopies, roomForCopies } from '../../src/core/store/chunkCopies';

const CHUNK = 4096;

function chunkOf(i: number): Buffer {
  return Buffer.alloc(CHUNK, i & 0xff);
}

function tempFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chunk-copies-')), 'copies');
}

describe('chunk copies', () => {
  it('are bounded by the room the disk has left, not by a size of their own (a disk with room for 5 copies, told by the test)', () => {
    let room = 5 * CHUNK;
    const copies = new ChunkCopies(tempFile(), CHUNK, () => room);
    for (let i = 0; i < 8; i++) copies.keep(i, chunkOf(i), false);
    expect(copies.size).toBe(5);
    // Once the disk is full, a chunk dropped for the first time is not kept; one dropped again takes the place of the copy read least recently.
    expect(copies.read(0, Buffer.alloc(CHUNK))?.equals(chunkOf(0))).toBe(true);
    copies.keep(9, chunkOf(9), true);
    expect(copies.size).toBe(5);
    expect(copies.has(1)).toBe(false);
    expect(copies.has(0)).toBe(true);
    expect(copies.read(9, Buffer.alloc(CHUNK))?.equals(chunkOf(9))).toBe(true);
    // After the copies gave their space back (the spill found the disk full), the room is looked at again.
    copies.dropAll();
    room = 2 * CHUNK;
    for (let i = 0; i < 4; i++) copies.keep(i, chunkOf(i), false);
    expect(copies.size).toBe(2);
    copies.close();
  });

  it('keep none on a disk with no room, even for chunks dropped again (told by the test)', () => {
    const file = tempFile();
    const copies = new ChunkCopies(file, CHUNK, () => 0);
    for (let i = 0; i < 4; i++) copies.keep(i, chunkOf(i), true);
    expect(copies.size).toBe(0);
    expect(fs.existsSync(file) ? fs.statSync(file).size : 0).toBe(0);
    copies.close();
  });

  it('keep as many as a large disk allows, looking at its free space again as they grow', () => {
    let looks = 0;
    const copies = new ChunkCopies(tempFile(), CHUNK, () => (looks++, 2 ** 40));
    const many = (64 * 1024 * 1024) / CHUNK + 10;
    const chunk = chunkOf(7);
    for (let i = 0; i < many; i++) copies.keep(i, chunk, false);
    expect(copies.size).toBe(many);
    expect(looks).toBe(2);
    copies.close();
  });

  it('leave a gigabyte or a tenth of the disk, whichever is more, on the real file system', () => {
    const file = tempFile();
    const st = fs.statfsSync(path.dirname(file));
    const free = st.bavail * st.bsize;
    const room = roomForCopies(file);
    expect(room).toBeDefined();
    expect(room as number).toBeLessThanOrEqual(Math.max(0, free - Math.max(1024 ** 3, 0.1 * st.blocks * st.bsize)) + 64 * 1024 * 1024);
    expect(room as number).toBeGreaterThanOrEqual(0);
  });
});
