import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PagedContents } from '../../src/core/store/pagedContents';
import { encodePagedSync, PagedFrame } from '../../src/core/store/pagedFrame';
import { tempHome } from './helpers/tempStore';

/**
 * The spill file (chunkSpill.ts) beside paged contents on real files: while a background
 * checkpoint reads what it captured, chunks SQLite writes again and evicts must reuse the slots
 * the checkpoint no longer needs, so the file stays bounded by the chunks written, not by how
 * often they were written.
 */

const CHUNK = 4096;
const CHUNKS = 32;

function contents(): { contents: PagedContents; spillFile: string } {
  const home = tempHome('chunk-spill');
  const file = path.join(home, 'paged.sqlite');
  fs.writeFileSync(file, Buffer.concat(encodePagedSync(Buffer.alloc(CHUNK * CHUNKS, 1), CHUNK)));
  const spillFile = path.join(home, 'paged.sqlite.spill');
  return { contents: new PagedContents(PagedFrame.fromFd(file, fs.openSync(file, 'r')), undefined, undefined, 8 * CHUNK, spillFile), spillFile };
}

/** Writes one byte into each of the chunks, then sends every chunk only memory holds to the spill. */
function writeAndSpill(c: PagedContents, chunks: number[], value: number): void {
  for (const i of chunks) c.set([value], i * CHUNK + 7);
  expect(c.spillUnsaved()).toBe(true);
}

describe('chunk spill', () => {
  it('a long background checkpoint does not make every chunk written again take a new slot', () => {
    const { contents: c, spillFile } = contents();
    const written = [...Array(CHUNKS).keys()];
    writeAndSpill(c, written, 2);
    const capture = c.capture({ copy: true });
    const captured = capture.parts.filter((p) => 'slot' in p).length;
    expect(captured).toBe(CHUNKS);
    // The checkpoint reads half of what it captured; SQLite meanwhile writes every chunk 50 times.
    const parts = capture.parts.filter((p): p is { index: number; slot: number; version: number } => 'slot' in p);
    for (const p of parts.slice(0, CHUNKS / 2)) expect(capture.readSpilled(p.slot, CHUNK)[7]).toBe(2);
    for (let round = 0; round < 50; round++) writeAndSpill(c, written, 3 + (round % 200));
    // Live: one slot per chunk; pinned by the checkpoint and released: the half it has not read.
    expect(c.cacheStats.spillFileBytes).toBeLessThanOrEqual((CHUNKS + CHUNKS / 2 + 1) * CHUNK);
    expect(fs.statSync(spillFile).size).toBeLessThanOrEqual((CHUNKS + CHUNKS / 2 + 1) * CHUNK);
    // What the checkpoint reads is still what it captured, though the chunks changed since.
    for (const p of parts.slice(CHUNKS / 2)) expect(capture.readSpilled(p.slot, CHUNK)[7]).toBe(2);
    capture.done();
    // And the live contents are the last writes.
    for (const i of written) expect(c.subarray(i * CHUNK + 7, i * CHUNK + 8)[0]).toBe(3 + (49 % 200));
    c.close();
  });

  it('slots a dropped checkpoint never read are reused once it is done', () => {
    const { contents: c } = contents();
    const written = [...Array(CHUNKS).keys()];
    writeAndSpill(c, written, 2);
    const capture = c.capture({ copy: true });
    writeAndSpill(c, written, 3);
    expect(c.cacheStats.spillFileBytes).toBe(2 * CHUNKS * CHUNK);
    capture.done();
    for (let round = 0; round < 20; round++) writeAndSpill(c, written, 4 + round);
    expect(c.cacheStats.spillFileBytes).toBe(2 * CHUNKS * CHUNK);
    c.close();
  });
});
