import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChunkReader, type ChunkJob } from '../../src/core/store/chunkReader';
import { HOT_CHUNKS_FILE, readHotChunks } from '../../src/core/store/hotChunks';
import { PagedFrame } from '../../src/core/store/pagedFrame';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { openTemp } from './helpers/tempStore';
import { expectRebuiltAfterDamage, pagedStore as pagedStoreOf } from './helpers/pagedStore';

/**
 * Cold open (issue 2): the read-ahead starts with the chunks the last process's first queries
 * asked for. The hint is only an order: whatever it says, every chunk is checked and read alike.
 */

const CHUNK = 4096;

function pagedStore(notes = 150, chunkBytes = CHUNK): ReturnType<typeof pagedStoreOf> {
  return pagedStoreOf('hot', notes, chunkBytes);
}

/** The chunk order the next open's worker is given. */
function spyOnJobs(): { order: () => number[]; restore: () => void } {
  const start = vi.spyOn(ChunkReader, 'start');
  return {
    order: () => ((start.mock.calls[0]?.[2] ?? []) as readonly ChunkJob[]).map((j) => j.index),
    restore: () => start.mockRestore(),
  };
}

afterEach(() => vi.restoreAllMocks());

describe('hot chunks first', () => {
  it('a process records the chunks SQLite asked for first; the next open decompresses those before the rest', async () => {
    const { home, file, rows, chunks } = await pagedStore();
    const a = await openTemp(home);
    // A look-up far into the table: its chunks are not the ones a read from the end reaches first.
    expect(queryRows(a.store.db, 'SELECT * FROM notes WHERE rowid = 40')).toEqual(rows.slice(39, 40));
    a.store.close();
    const hint = readHotChunks(file, CHUNK, chunks);
    expect(hint[0]).toBe(0);
    expect(hint.length).toBeGreaterThan(2);
    expect(hint.length).toBeLessThan(chunks);

    const jobs = spyOnJobs();
    const b = await openTemp(home);
    const order = jobs.order();
    jobs.restore();
    const loadedAtStart = new Set(hint.filter((i) => !order.includes(i)));
    expect(order.slice(0, hint.length - loadedAtStart.size)).toEqual(hint.filter((i) => !loadedAtStart.has(i)));
    expect([...order].sort((x, y) => x - y)).toEqual([...Array(chunks).keys()].filter((i) => !loadedAtStart.has(i)));
    // A process that searched nothing keeps what the one before it learned, after its own first chunks.
    b.store.close();
    const kept = readHotChunks(file, CHUNK, chunks);
    expect(kept.filter((i) => hint.includes(i))).toEqual(hint);
    const c = await openTemp(home);
    expect(queryRows(c.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
    c.store.close();
  });

  it('a stale, damaged or foreign hint changes nothing but the order: same rows, every chunk checked, no warning', async () => {
    const { home, file, rows, chunks } = await pagedStore();
    const hintFile = path.join(home, HOT_CHUNKS_FILE);
    const bad: string[] = [
      '{"v":1,"chunkBytes":4096,"count"', // cut short
      'not json at all',
      JSON.stringify({ v: 1, chunkBytes: 1024 * 1024, count: chunks, chunks: [3, 2, 1] }), // another layout
      JSON.stringify({ v: 1, chunkBytes: CHUNK, count: chunks + 5, chunks: [3, 2, 1] }), // a file since compacted
      JSON.stringify({ v: 2, chunkBytes: CHUNK, count: chunks, chunks: [3] }),
      JSON.stringify({ v: 1, chunkBytes: CHUNK, count: chunks, chunks: 'all' }),
      `{"v":1,"chunkBytes":${CHUNK},"count":${chunks},"chunks":[${'7,'.repeat(40_000)}7]}`, // larger than any hint written
    ];
    for (const text of bad) {
      fs.writeFileSync(hintFile, text);
      expect(readHotChunks(file, CHUNK, chunks)).toEqual([]);
      const jobs = spyOnJobs();
      const s = await openTemp(home);
      const order = jobs.order();
      jobs.restore();
      // No hint: from the end of the file, as before hints existed.
      expect(order[0]).toBe(chunks - 1);
      expect(queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
      expect(queryScalar(s.store.db, 'PRAGMA integrity_check')).toBe('ok');
      expect(s.store.warnings).toEqual([]);
      s.store.close();
    }
    // Indexes out of range, repeated, negative or fractional are dropped; the valid ones keep their order.
    fs.writeFileSync(hintFile, JSON.stringify({ v: 1, chunkBytes: CHUNK, count: chunks, chunks: [5, -1, 5, 2.5, chunks, 3, 'x', null, 4] }));
    expect(readHotChunks(file, CHUNK, chunks)).toEqual([5, 3, 4]);
    const jobs = spyOnJobs();
    const s = await openTemp(home);
    const order = jobs.order();
    jobs.restore();
    expect(order.slice(0, 3)).toEqual([5, 3, 4]);
    expect(queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
    s.store.close();
  });

  it('a hint naming a damaged chunk first: the damage is found, the file set aside and the store rebuilt, as without a hint', async () => {
    const { home, file, rows, chunks } = await pagedStore();
    const frame = PagedFrame.fromFd(file, fs.openSync(file, 'r'));
    const target = Math.floor(chunks / 2);
    const entry = frame.entries[target];
    frame.close();
    if (!entry) throw new Error('no such chunk');
    const fd = fs.openSync(file, 'r+');
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, entry.at + 1);
    b[0] = (b[0] ?? 0) ^ 0x01;
    fs.writeSync(fd, b, 0, 1, entry.at + 1);
    fs.closeSync(fd);
    fs.writeFileSync(path.join(home, HOT_CHUNKS_FILE), JSON.stringify({ v: 1, chunkBytes: CHUNK, count: chunks, chunks: [target] }));
    const s = await openTemp(home);
    await expectRebuiltAfterDamage(s, home, rows, String(target));
    s.store.close();
  });

  it('the reader protocol: a chunk is either taken from the worker (waiting for one it is on) or claimed here, never both', async () => {
    const { file, chunks } = await pagedStore(300, 512);
    const frame = PagedFrame.fromFd(file, fs.openSync(file, 'r'));
    const jobs: ChunkJob[] = frame.entries.map((e, index) => ({ index, at: e.at, length: e.length, hash: e.hash, raw: frame.rawLength(index) }));
    const delivered = new Map<number, number>();
    const reader = ChunkReader.start(file, () => true, jobs, (r) => {
      expect('error' in r).toBe(false);
      delivered.set(r.index, (delivered.get(r.index) ?? 0) + 1);
    });
    if (!reader) throw new Error('no worker');
    // Let the worker get some way in, then ask for every chunk from the far end: those it has not
    // reached are claimed here and skipped there, one it is on is waited for, the first are finished.
    // (Asked in its own order, this thread could trail it chunk by chunk and never claim one.)
    const until = performance.now() + 10_000;
    while (delivered.size === 0 && performance.now() < until) {
      reader.drain();
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 0.2);
    }
    const claimedHere: number[] = [];
    for (let i = chunks - 1; i >= 0; i--) if (!reader.takeOrClaim(i, () => delivered.has(i))) claimedHere.push(i);
    await reader.finished;
    frame.close();
    expect([...delivered.values()].every((n) => n === 1)).toBe(true);
    expect(claimedHere.filter((i) => delivered.has(i))).toEqual([]);
    expect(delivered.size + claimedHere.length).toBe(chunks);
    expect(claimedHere.length).toBeGreaterThan(0);
  });

  it('a query racing the worker takes what it finished or is on, and no chunk is decompressed twice', async () => {
    const { home, rows, chunks } = await pagedStore(300);
    for (let round = 0; round < 3; round++) {
      const s = await openTemp(home);
      // At once, with the worker just started: both threads want the same chunks now.
      expect(queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
      expect(queryScalar(s.store.db, 'PRAGMA integrity_check')).toBe('ok');
      await expect.poll(() => s.store.fileStats.loadedChunks, { timeout: 10_000 }).toBe(chunks);
      expect(s.store.fileStats.duplicateLoads).toBe(0);
      expect(s.store.warnings).toEqual([]);
      s.store.close();
    }
  });
});
