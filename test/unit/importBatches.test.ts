import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { walkTranscriptFiles } from '../../src/core/history/importer';
import { BATCH_FILES } from '../../src/core/history/importPipeline';
import { parseOperation } from '../../src/core/store/journal';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { BlobStore } from '../../src/core/store/blobStore';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

const FIXTURES = transcriptFixtures();
const T = Date.parse('2026-02-01T09:00:00Z');
const GROWING = 'claude-code/project-a/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl';

/** Every row an import writes, but the time each file was seen (the clock is fixed anyway). */
function rows(s: Services) {
  const db = s.store.db;
  return {
    sessions: queryRows(db, 'SELECT * FROM sessions ORDER BY id'),
    runs: queryRows(db, 'SELECT * FROM runs ORDER BY id'),
    events: queryRows(db, 'SELECT * FROM events ORDER BY id'),
    index: queryRows(db, 'SELECT docid, body, created_at, scope, session_id, kind FROM history_fts ORDER BY docid'),
    files: queryRows(db, 'SELECT path, size, mtime_ms FROM import_files ORDER BY path'),
  };
}

function opsOf(s: Services) {
  const text = fs.readFileSync(path.join(s.store.home, 'journal.jsonl'), 'utf8');
  return text.split('\n').filter((l) => l.startsWith('{')).map((l) => parseOperation(l)).filter((o) => typeof o !== 'string');
}

/**
 * The fixtures twice over (so a call holds more files than a batch), plus the first lines of one
 * session under a name that sorts before its full file: both files land in one call, and the
 * full one must see the head's events as a later line would.
 */
function corpus(): string {
  const dir = tempHome('batch-corpus');
  fs.cpSync(FIXTURES, path.join(dir, 'a'), { recursive: true });
  fs.cpSync(FIXTURES, path.join(dir, 'b'), { recursive: true });
  // Their own folder, walked first, and no blobs to wait for: nothing but the shared session splits them.
  const lines = fs.readFileSync(path.join(FIXTURES, GROWING), 'utf8').split('\n').filter(Boolean);
  fs.mkdirSync(path.join(dir, 'c'));
  fs.writeFileSync(path.join(dir, 'c', '0-head.jsonl'), lines.slice(0, 3).join('\n') + '\n');
  fs.copyFileSync(path.join(FIXTURES, GROWING), path.join(dir, 'c', path.basename(GROWING)));
  return dir;
}

describe('an import journals its files in batches', () => {
  it('gives exactly the rows and report of one call per file, with a session seen twice split across lines, in fewer lines than files', async () => {
    const dir = corpus();
    const batched = await openTemp(tempHome('batched'), () => T);
    const report = await batched.importer.importPaths([dir]);
    const single = await openTemp(tempHome('single'), () => T);
    const files = [...walkTranscriptFiles(dir)];
    expect(files.length).toBeGreaterThan(BATCH_FILES);
    let events = 0;
    let sessions = 0;
    for (const file of files) {
      const r = await single.importer.importPaths([file]);
      events += r.events;
      sessions += r.sessions;
    }
    expect(report.events).toBe(events);
    expect(report.sessions).toBe(sessions);
    expect(report.files).toBe(files.length);
    expect(rows(batched)).toEqual(rows(single));

    const ops = opsOf(batched);
    const perLine = ops.map((o) => (o.op === 'history.files.imported' ? (o as unknown as { files: unknown[] }).files.length : o.op === 'history.file.imported' ? 1 : 0));
    expect(perLine.reduce((a, b) => a + b, 0)).toBe(files.length);
    expect(Math.max(...perLine)).toBeLessThanOrEqual(BATCH_FILES);
    expect(perLine.filter((n) => n > 0).length).toBeLessThan(files.length / 4);
    // Replay (a second process) applies the batch lines to the same rows.
    const replayed = await openTemp(batched.store.home, () => T);
    expect(rows(replayed)).toEqual(rows(batched));
    for (const s of [batched, single, replayed]) s.store.close();
  });

  it('has every blob a journaled event names on disk, whole, when importPaths resolves, and leaves no temp file', async () => {
    const s = await openTemp();
    await s.importer.importPaths([FIXTURES]);
    const named = queryRows(s.store.db, 'SELECT blob, bytes FROM events WHERE blob IS NOT NULL');
    expect(named.length).toBeGreaterThan(3);
    // A store that did not write them reads them: they are files, not state of this process.
    const reader = new BlobStore(path.join(s.store.home, 'blobs'));
    for (const row of named) expect(reader.get(String(row.blob))?.length).toBe(Number(row.bytes));
    const left = fs.readdirSync(path.join(s.store.home, 'blobs'), { recursive: true }).map(String).filter((f) => f.includes('.tmp-'));
    expect(left).toEqual([]);
    s.store.close();
  });

  it('journals nothing for a file whose blob could not be written, and the import fails (a disk error stood in for by a rejected write)', async () => {
    const s = await openTemp();
    const real = s.store.blobs.putInBackground.bind(s.store.blobs);
    s.store.blobs.putInBackground = (content) => {
      const pending = real(content);
      return { hash: pending.hash, durable: pending.durable.then(() => Promise.reject(new Error('ENOSPC: no space left on device'))) };
    };
    await expect(s.importer.importPaths([FIXTURES])).rejects.toThrow(/ENOSPC/);
    const withBlobs = new Set(queryRows(s.store.db, 'SELECT blob FROM events WHERE blob IS NOT NULL').map((r) => r.blob));
    expect(withBlobs.size).toBe(0);
    // The files journaled before the failure are whole and are skipped next time; the rest import then.
    s.store.blobs.putInBackground = real;
    const again = await s.importer.importPaths([FIXTURES]);
    expect(again.events).toBeGreaterThan(0);
    const fresh = await openTemp();
    await fresh.importer.importPaths([FIXTURES]);
    const count = (x: Services) => queryRows(x.store.db, 'SELECT count(*) AS n, count(blob) AS b FROM events')[0];
    expect(count(s)).toEqual(count(fresh));
    expect(Number(count(s)?.b)).toBeGreaterThan(3);
    s.store.close();
    fresh.store.close();
  });
});

describe('BlobStore.putInBackground', () => {
  it('writes the same file put writes, returns the hash at once, and shares one write for the same content in flight', async () => {
    const root = tempHome('bgblobs');
    const text = Array.from({ length: 300 }, (_, i) => `row ${i}: {"status": "ok"}`).join('\n');
    const bg = new BlobStore(path.join(root, 'bg'));
    const first = bg.putInBackground(text);
    const second = bg.putInBackground(text);
    expect(second.durable).toBe(first.durable);
    await first.durable;
    const sync = new BlobStore(path.join(root, 'sync'));
    expect(sync.put(text)).toBe(first.hash);
    expect(bg.encodingOf(first.hash)).toBe(sync.encodingOf(first.hash));
    expect(fs.readFileSync(bg.pathOf(first.hash)).equals(fs.readFileSync(sync.pathOf(first.hash)))).toBe(true);
    expect(bg.get(first.hash)?.toString('utf8')).toBe(text);
    // Known content: nothing to write, already durable.
    const again = bg.putInBackground(text);
    expect(again.durable).not.toBe(first.durable);
    await again.durable;
    const noise = randomBytes(4096);
    const plain = bg.putInBackground(noise);
    await plain.durable;
    expect(bg.encodingOf(plain.hash)).toBe('none');
    expect(bg.get(plain.hash)?.equals(noise)).toBe(true);
  });
});
