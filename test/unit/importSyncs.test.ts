import { afterEach, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import { MAX_PENDING_SYNCS, PendingSyncs } from '../../src/core/history/pendingSyncs';
import { Journal } from '../../src/core/store/journal';
import { queryRows } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

/**
 * An import leaves each file's journal fsync running on the thread pool while it parses the
 * next file (issue 3, import speed); it must still report success only once all are on disk,
 * and a failed fsync must fail the import rather than vanish.
 */

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterEach(() => {
  unhandled.length = 0;
});

/** A promise settled from outside, standing in for one fsync's completion. */
function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('fsyncs left running during an import (PendingSyncs)', () => {
  it('keeps syncs running without waiting, and at the limit waits for the oldest only', async () => {
    const syncs = new PendingSyncs();
    const pending = Array.from({ length: MAX_PENDING_SYNCS }, deferred);
    for (const d of pending.slice(0, -1)) await syncs.add(d.promise);
    expect(syncs.size).toBe(MAX_PENDING_SYNCS - 1);
    let waited = false;
    const last = syncs.add(pending.at(-1)!.promise).then(() => (waited = true));
    await turn();
    expect(waited).toBe(false);
    pending[1]!.resolve(); // not the oldest: still waiting
    await turn();
    expect(waited).toBe(false);
    pending[0]!.resolve();
    await last;
    expect(syncs.size).toBe(MAX_PENDING_SYNCS - 1);
    for (const d of pending) d.resolve();
    await syncs.all();
    expect(syncs.size).toBe(0);
  });

  it('a failed sync at the head of a full window fails the add that waits for it', async () => {
    const syncs = new PendingSyncs();
    const pending = Array.from({ length: MAX_PENDING_SYNCS }, deferred);
    for (const d of pending.slice(0, -1)) await syncs.add(d.promise);
    const last = syncs.add(pending.at(-1)!.promise);
    pending[0]!.reject(new Error('EIO: fdatasync failed'));
    await expect(last).rejects.toThrow('EIO: fdatasync failed');
    for (const d of pending) d.resolve();
    await syncs.all();
  });

  it('a failed fsync fails all() with its error, and is never an unhandled rejection while it waits', async () => {
    const syncs = new PendingSyncs();
    const ok = deferred();
    const bad = deferred();
    await syncs.add(ok.promise);
    await syncs.add(bad.promise);
    bad.reject(new Error('EIO: fdatasync failed'));
    ok.resolve();
    await turn();
    await turn();
    expect(unhandled).toEqual([]);
    await expect(syncs.all()).rejects.toThrow('EIO: fdatasync failed');
    expect(syncs.size).toBe(0);
  });
});

describe('Journal.sync (fdatasync on the thread pool)', () => {
  it('calls made while one fdatasync runs share the next one, which starts after it; every call settles', async () => {
    const journal = new Journal(path.join(tempHome('jsync'), 'journal.jsonl'));
    journal.append({ op: 'test.a', at: 1 }, { sync: false });
    const first = journal.sync();
    journal.append({ op: 'test.b', at: 2 }, { sync: false });
    const later = [journal.sync(), journal.sync(), journal.sync()];
    expect(later[0]).not.toBe(first);
    expect(later.every((p) => p === later[0])).toBe(true);
    await Promise.all([first, ...later]);
    const after = journal.sync(); // nothing running now: a fresh one
    expect(after).not.toBe(later[0]);
    await after;
    journal.close();
  });
});

describe('an import with its fsyncs in the background', () => {
  it('imports every fixture with none left running when importPaths resolves, and a second store on the same folder reads every line', async () => {
    const home = tempHome('bgsync');
    const a = await openTemp(home);
    const journal = (a.store as unknown as { journal: { syncRunning?: Promise<void>; syncQueued?: Promise<void> } }).journal;
    const report = await a.importer.importPaths([transcriptFixtures()]);
    expect(report.files).toBeGreaterThan(5);
    expect(journal.syncRunning).toBeUndefined();
    expect(journal.syncQueued).toBeUndefined();
    const b = await openTemp(home);
    const count = (s: typeof a) => Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM events')[0]?.n);
    expect(count(b)).toBe(report.events);
    expect(count(a)).toBe(report.events);
    a.store.close();
    b.store.close();
  });

  it('a store closed while its background fsync may still be queued closes cleanly: the sync settles, nothing is unhandled, the line is kept', async () => {
    const home = tempHome('bgclose');
    const a = await openTemp(home);
    const { synced } = await a.store.commitSyncingInBackground(() => ({ op: { op: 'test.unknown', at: 1 }, result: 1 }));
    const outcome = synced.then(() => 'synced', (err: Error) => err.message);
    a.store.close();
    expect(['synced', expect.stringMatching(/EBADF/)]).toContainEqual(await outcome);
    await turn();
    expect(unhandled).toEqual([]);
    const b = await openTemp(home);
    expect(b.store.journalProblems).toBe(1); // the line is there (an op this build does not know)
    b.store.close();
  });
});
