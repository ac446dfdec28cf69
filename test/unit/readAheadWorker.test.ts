import * as fs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { openServices } from '../../src/core/services';
import { ChunkReader } from '../../src/core/store/chunkReader';
import type { DatabaseFile } from '../../src/core/store/databaseFile';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { openTemp, WASM_PATH } from './helpers/tempStore';
import { pagedStore as pagedStoreOf } from './helpers/pagedStore';

/** Remember latency (issue 2): the snapshot's read-ahead runs in a worker, so a busy main thread does not stall it. */

function pagedStore(notes: number, chunkBytes: number): ReturnType<typeof pagedStoreOf> {
  return pagedStoreOf('readahead', notes, chunkBytes);
}

/** Blocks this thread without ever returning to the event loop, as a long synchronous job does. */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Descriptors this process holds on files under `home` (Linux's /proc names each one's file). */
const fdsUnder = (home: string) =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(home);
    } catch {
      return false; // closed while listing
    }
  }).length;

describe('the read-ahead worker', () => {
  it('keeps decompressing while the main thread never yields, and a query then takes its chunks instead of decompressing them itself', async () => {
    const { home, rows, chunks } = await pagedStore(120, 4096);
    const a = await openTemp(home);
    const before = a.store.fileStats;
    expect(before.loadedChunks).toBeLessThan(chunks / 2);
    // No await from here on: thread-pool reads would deliver nothing until the event loop turns.
    blockFor(3000);
    expect(queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
    expect(queryScalar(a.store.db, 'PRAGMA integrity_check')).toBe('ok');
    const after = a.store.fileStats;
    expect(after.loadedChunks).toBe(chunks);
    // Decompressed on the main thread: at most the few the open itself needed, never the rest of the file.
    expect(after.syncLoads - before.syncLoads).toBeLessThan(chunks / 4);
    a.store.close();
  });

  it('when the file was replaced before the read-ahead starts, no worker reads the new one: the thread pool reads the opened file instead', async () => {
    const { home, rows, chunks } = await pagedStore(120, 4096);
    const a = await openServices({ home, wasmPath: WASM_PATH, readAhead: false });
    const b = await openTemp(home);
    await b.memory.remember({ statement: 'checkpointed over the file a reads' }, 'test');
    b.store.checkpoint(); // renames a new file over the path a opened
    const loadsBefore = a.store.fileStats.syncLoads;
    const start = vi.spyOn(ChunkReader, 'start');
    await (a.store as unknown as { dbFile: DatabaseFile }).dbFile.readAhead();
    expect(start).toHaveBeenCalledTimes(1);
    expect(start.mock.results[0]?.value).toBeUndefined();
    start.mockRestore();
    expect(a.store.fileStats.loadedChunks).toBe(chunks);
    expect(a.store.fileStats.syncLoads).toBe(loadsBefore);
    expect(queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid').slice(0, rows.length)).toEqual(rows);
    expect(a.memory.status().entries).toBe(rows.length + 1);
    a.store.close();
    b.store.close();
  });

  // Counting descriptors needs Linux's /proc.
  it.skipIf(process.platform !== 'linux')('a store closed while its worker runs stops it, leaks no descriptor, and the file reopens to the same rows', async () => {
    const { home, rows } = await pagedStore(200, 2048);
    const a = await openTemp(home);
    expect(fdsUnder(home)).toBeGreaterThan(0);
    a.store.close();
    await expect.poll(() => fdsUnder(home), { timeout: 10_000 }).toBe(0);
    const b = await openTemp(home);
    expect(queryRows(b.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
    expect(b.store.warnings).toEqual([]);
    b.store.close();
  });
});
