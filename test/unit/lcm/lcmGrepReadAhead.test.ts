import * as fs from 'node:fs';
import * as path from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BlobReader, ReadAhead } from '../../../src/core/lcm/blobReader';
import { DEFAULT_GREP_OPTIONS, LcmGrep, type GrepRequest } from '../../../src/core/lcm/lcmGrep';
import type { Services } from '../../../src/core/services';
import { COMPRESSED_SUFFIX } from '../../../src/core/store/blobStore';
import { queryRows } from '../../../src/core/store/sqlite';
import { tempHome } from '../helpers/tempStore';
import { BLOB_PATTERN_CASES, bruteForce, bruteRanked } from './grepReference';
import { importedFixtures } from './lcmFixture';

/**
 * A full regex pass reads its blobs on a worker thread (ReadAhead) once there are enough of them.
 * The fixtures hold too few to reach the threshold, so the reader's threshold is lowered here:
 * every answer — which events match, their order, excerpts, counts and scan figures — must be
 * the one the same search gives reading each blob on the main thread, and a scan of every text.
 * Some blobs are kept plain (the worker cannot decode them) and one compressed file is damaged
 * beside a good plain copy, so the fallback to the store's own read is taken too.
 */

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
  const hashes = queryRows(s.store.db, 'SELECT DISTINCT blob FROM events WHERE blob IS NOT NULL ORDER BY blob').map((r) => String(r.blob));
  expect(hashes.length).toBeGreaterThan(3);
  hashes.forEach((h, i) => {
    const packed = s.store.blobs.pathOf(h);
    expect(packed.endsWith(COMPRESSED_SUFFIX)).toBe(true);
    const bytes = s.store.blobs.get(h)!;
    if (i % 3 === 1) {
      fs.writeFileSync(packed.slice(0, -COMPRESSED_SUFFIX.length), bytes);
      fs.rmSync(packed);
    } else if (i === 2) {
      fs.writeFileSync(packed.slice(0, -COMPRESSED_SUFFIX.length), bytes);
      fs.writeFileSync(packed, Buffer.from('not brotli at all'));
    }
  });
});
afterAll(() => s.store.close());

const ALL = { all: true as const, how: 'all conversations' };

describe('lcm_grep reading blobs on a worker thread', () => {
  it('gives the same answers as reading them on the main thread, and as a scan of every text', async () => {
    const onWorker = new LcmGrep(s.store, { ...DEFAULT_GREP_OPTIONS, readAheadMin: 1, timeBoundMs: Infinity });
    const onMain = new LcmGrep(s.store, { ...DEFAULT_GREP_OPTIONS, readAheadMin: Infinity, timeBoundMs: Infinity });
    // The first regex call summarises every blob it reads into the shared filter file, and later
    // calls skip the blobs those filters rule out: both start from the same filters.
    const warm: GrepRequest = { pattern: '[a-z]', mode: 'regex', scope: 'messages', limit: 1, sort: 'relevance' };
    await onWorker.grep(warm, ALL);
    await onMain.grep(warm, ALL);
    const started = vi.spyOn(ReadAhead, 'start');
    const cases: [string, RegExp][] = [...BLOB_PATTERN_CASES, ['/import/i', /import/i]];
    try {
      for (const [pattern, re] of cases) {
        for (const sort of ['relevance', 'hybrid'] as const) {
          const req: GrepRequest = { pattern, mode: 'regex', scope: 'messages', limit: 200, sort };
          const ours = await onWorker.grep(req, ALL);
          expect(ours, `${pattern} ${sort}`).toEqual(await onMain.grep(req, ALL));
          if (!('matches' in ours)) throw new Error(`${pattern} was refused`);
          if (sort === 'relevance') expect(ours.matches.map((m) => m.id), pattern).toEqual(bruteRanked(s, re, 'messages').slice(0, 200));
          const expected = bruteForce(s, re, 'messages');
          if (expected.size <= 200) expect(new Set(ours.matches.map((m) => m.id)), pattern).toEqual(expected);
        }
      }
      // The worker really read them: every full pass over blobs started one.
      const readers = started.mock.results.map((r) => r.value as unknown);
      expect(readers.length).toBeGreaterThan(0);
      expect(readers.every((r) => r instanceof ReadAhead)).toBe(true);
      // Its memory is out of the store's budget while it waits for the next scan.
      expect(s.store.memoryStatus().reserved_mb?.grep_read_ahead).toBeGreaterThan(0);
    } finally {
      started.mockRestore();
    }
  });
});

describe('BlobReader', () => {
  it('hands over each file decoded, in order, null for what it cannot read, however far ahead it may read', () => {
    const dir = tempHome('blob-reader');
    try {
      const texts = Array.from({ length: 40 }, (_, i) => `blob ${i} `.repeat(200 + i * 37));
      const files = texts.map((t, i) => {
        const file = path.join(dir, `f${i}.br`);
        if (i === 7) fs.writeFileSync(file, 'damaged');
        else if (i !== 11) fs.writeFileSync(file, brotliCompressSync(Buffer.from(t)));
        return file; // f11 is missing
      });
      for (const ahead of [1, 10_000, 1 << 24]) {
        const reader = BlobReader.start(files, ahead)!;
        try {
          texts.forEach((t, i) => {
            const got = reader.next();
            if (i === 7 || i === 11) expect(got, `file ${i}`).toBeNull();
            else expect(got?.toString('utf8'), `file ${i}, ahead ${ahead}`).toBe(t);
          });
          expect(() => reader.next()).toThrow(/past the end/);
        } finally {
          reader.close();
        }
      }
      // Stopped halfway: nothing hangs, and a new reader starts afresh.
      const early = BlobReader.start(files, 1)!;
      expect(early.next()?.toString('utf8')).toBe(texts[0]);
      early.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps its worker between lists: a list stopped halfway leaves nothing behind for the next, and a worker that ended is replaced', async () => {
    const dir = tempHome('blob-reader-kept');
    try {
      const files = Array.from({ length: 30 }, (_, i) => {
        const file = path.join(dir, `f${i}.br`);
        fs.writeFileSync(file, brotliCompressSync(Buffer.from(`kept ${i} `.repeat(3000))));
        return file;
      });
      const workerOf = (r: BlobReader) => (r as unknown as { worker: Worker }).worker;
      const first = BlobReader.start(files, 1)!;
      expect(first.next()?.toString('utf8')).toBe(`kept 0 `.repeat(3000));
      first.close(); // stopped halfway, its worker possibly still decoding
      // The same worker serves the next list, from its own first file, whatever the last one had queued.
      const reversed = [...files].reverse();
      const second = BlobReader.start(reversed, 1 << 24)!;
      expect(workerOf(second)).toBe(workerOf(first));
      reversed.forEach((_, i) => expect(second.next()?.toString('utf8'), `file ${i}`).toBe(`kept ${29 - i} `.repeat(3000)));
      second.close();
      // Two lists at once: the second gets a worker of its own.
      const a = BlobReader.start(files)!;
      const b = BlobReader.start(files)!;
      expect(workerOf(b)).not.toBe(workerOf(a));
      expect(a.next()?.toString('utf8')).toBe(`kept 0 `.repeat(3000));
      expect(b.next()?.toString('utf8')).toBe(`kept 0 `.repeat(3000));
      a.close();
      b.close();
      // The kept worker ended (killed, crashed): the next list starts a new one.
      const idle = BlobReader.start([])!;
      idle.close();
      const kept = workerOf(idle);
      await kept.terminate();
      const after = BlobReader.start(files)!;
      expect(workerOf(after)).not.toBe(kept);
      expect(after.next()?.toString('utf8')).toBe(`kept 0 `.repeat(3000));
      after.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
