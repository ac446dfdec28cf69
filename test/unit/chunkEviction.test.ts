import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PagedContents } from '../../src/core/store/pagedContents';
import { encodePagedSync, PagedFrame } from '../../src/core/store/pagedFrame';
import { tempHome } from './helpers/tempStore';

/**
 * The bounded chunk cache's choice of what to drop (chunkEviction.ts), on a real snapshot file:
 * a scan over more chunks than the cache holds must not push out the chunks other reads keep
 * coming back to, and every read gives the database's bytes whatever was dropped.
 */

const CHUNK = 4096;
const CHUNKS = 64;
const PAGE = 512;

function database(): Buffer {
  const out = Buffer.alloc(CHUNK * CHUNKS);
  let a = 7;
  for (let i = 0; i < out.length; i++) {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    out[i] = a >>> 24 < 128 ? a >>> 24 : 32; // compressible, not trivially
  }
  return out;
}

function contentsOf(data: Buffer, cacheChunks: number): PagedContents {
  const file = path.join(tempHome('chunk-eviction'), 'paged.sqlite');
  fs.writeFileSync(file, Buffer.concat(encodePagedSync(data, CHUNK)));
  return new PagedContents(PagedFrame.fromFd(file, fs.openSync(file, 'r')), undefined, undefined, cacheChunks * CHUNK);
}

/** Reads a chunk page by page, as SQLite walks a table, checking every byte. */
function readChunk(contents: PagedContents, data: Buffer, i: number): void {
  for (let at = i * CHUNK; at < (i + 1) * CHUNK; at += PAGE) {
    expect(Buffer.from(contents.subarray(at, at + PAGE)).equals(data.subarray(at, at + PAGE))).toBe(true);
  }
}

describe('chunk eviction', () => {
  it('a scan over more chunks than the cache holds leaves the chunks other queries keep reading', () => {
    const data = database();
    const contents = contentsOf(data, 16);
    // What searches come back to (an index's leaves, a small table): four chunks.
    const hot = [0, 1, 2, 3];
    // They are read, other chunks after them, and they are read again: not one query walking through them.
    for (const i of hot) readChunk(contents, data, i);
    for (let i = 50; i < 60; i++) readChunk(contents, data, i);
    for (const i of hot) readChunk(contents, data, i);
    expect(contents.cacheStats.evictions).toBe(0);
    // Then queries that each read them and scan 40 other chunks (a table larger than the cache).
    for (let q = 0; q < 3; q++) {
      const before = contents.cacheStats.reloads;
      const loadsBefore = contents.cacheStats.evictions;
      for (const i of hot) readChunk(contents, data, i);
      const heldHot = contents.cacheStats.evictions === loadsBefore && contents.cacheStats.reloads === before;
      expect(heldHot).toBe(true);
      for (let i = 10; i < 50; i++) readChunk(contents, data, i);
      expect(contents.cacheStats.reloads - before).toBeLessThanOrEqual(40);
    }
    contents.close();
  });

  it('random reads under a small cache always give the database\'s bytes, and the cache stays within its size', () => {
    const data = database();
    const contents = contentsOf(data, 8);
    let a = 11;
    for (let n = 0; n < 3000; n++) {
      a = (Math.imul(a, 1103515245) + 12345) >>> 0;
      // Skewed: most reads go to a few chunks, some anywhere, some in runs (scans).
      const r = (a >>> 8) % 100;
      const i = r < 60 ? r % 5 : r < 80 ? (a >>> 16) % CHUNKS : 20 + (n % 30);
      const at = i * CHUNK + ((a >>> 4) % (CHUNK / PAGE)) * PAGE;
      expect(Buffer.from(contents.subarray(at, at + PAGE)).equals(data.subarray(at, at + PAGE))).toBe(true);
      expect(contents.loadedChunks).toBeLessThanOrEqual(8);
    }
    expect(contents.cacheStats.evictions).toBeGreaterThan(0);
    contents.close();
  });

  it('written chunks are never dropped, and reads of them give what was written', () => {
    const data = database();
    const contents = contentsOf(data, 4);
    const mine = Buffer.alloc(PAGE, 0x5a);
    contents.set(mine, 2 * CHUNK); // chunk 2 is dirty from here on
    for (let round = 0; round < 3; round++) for (let i = 10; i < 30; i++) readChunk(contents, data, i);
    expect(Buffer.from(contents.subarray(2 * CHUNK, 2 * CHUNK + PAGE)).equals(mine)).toBe(true);
    expect(contents.dirtyChunks).toBe(1);
    contents.close();
  });
});
