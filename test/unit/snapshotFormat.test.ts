import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SnapshotFormatError } from '../../src/core/store/errors';
import { openSnapshot, readSnapshot } from '../../src/core/store/snapshot';
import { queryRows } from '../../src/core/store/sqlite';
import { openTemp, tempHome } from './helpers/tempStore';

/** One snapshot format (format version 3, pagedFrame.ts): whatever else sits at store.sqlite is refused and the store rebuilt from its journal. */

/** A store with 20 notes checkpointed, the snapshot's bytes and the database inside it. */
async function sampleStore(): Promise<{ home: string; snapshot: string; current: Buffer; database: Buffer; notes: Record<string, unknown>[] }> {
  const home = tempHome('snapformat');
  const a = await openTemp(home);
  for (let i = 0; i < 20; i++) await a.memory.remember({ statement: `snapshot format note ${i}` }, 'test');
  a.store.checkpoint();
  const notes = queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid');
  a.store.close();
  const snapshot = path.join(home, 'store.sqlite');
  const current = fs.readFileSync(snapshot);
  const database = Buffer.from(readSnapshot(snapshot) ?? []);
  return { home, snapshot, current, database, notes };
}

/** Frame version 1 as an earlier build wrote it: magic, size, SHA-256 of the payload, one brotli stream. */
function frameV1(database: Buffer): Buffer {
  const payload = brotliCompressSync(database);
  const header = Buffer.alloc(48);
  header.write('RCLSNAP\x01', 0, 'latin1');
  header.writeBigUInt64LE(BigInt(database.length), 8);
  createHash('sha256').update(payload).digest().copy(header, 16);
  return Buffer.concat([header, payload]);
}

/** The same header with another version byte (2: the 16 MB-chunked frame of earlier builds; 9: a newer build's). */
function withVersion(current: Buffer, version: number): Buffer {
  const out = Buffer.from(current);
  out[7] = version;
  return out;
}

describe('snapshot format', () => {
  it('the snapshot says its format version in its header', async () => {
    const { current } = await sampleStore();
    expect(current.toString('latin1', 0, 7)).toBe('RCLSNAP');
    expect(current[7]).toBe(3);
  });

  it("an earlier build's snapshot (version 1, version 2, gzip, plain SQLite) or a newer build's is refused with its reason, kept aside, and the store rebuilt from the journal", async () => {
    const { home, snapshot, current, database, notes } = await sampleStore();
    const cases: [string, Buffer, string][] = [
      ['version 1', frameV1(database), 'is in snapshot format version 1, written by an earlier build'],
      ['version 2', withVersion(current, 2), 'is in snapshot format version 2, written by an earlier build'],
      ['gzip', gzipSync(database), "is a gzip file (an earlier build's snapshot)"],
      ['plain', database, "is an uncompressed SQLite file (an earlier build's snapshot)"],
      ['newer', withVersion(current, 9), 'is in snapshot format version 9, written by a newer build'],
    ];
    for (const [n, [label, bytes, reason]] of cases.entries()) {
      fs.writeFileSync(snapshot, bytes);
      await expect(openSnapshot(snapshot), label).rejects.toThrow(SnapshotFormatError);
      expect(() => readSnapshot(snapshot), label).toThrow(`store snapshot ${snapshot} ${reason}; this build reads snapshot format version 3 only`);
      const b = await openTemp(home);
      expect(b.store.warnings, label).toEqual([
        expect.stringMatching(new RegExp(`^store snapshot .* ${reason.replace(/[()]/g, '\\$&')}; this build reads snapshot format version 3 only\\. It was kept at .*store\\.sqlite\\.old-format-.* and the memory was rebuilt from the journal\\.$`)),
      ]);
      expect(queryRows(b.store.db, 'SELECT * FROM notes ORDER BY rowid'), label).toEqual(notes);
      const aside = fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.old-format-'));
      expect(aside, label).toHaveLength(n + 1);
      expect(fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-')), label).toEqual([]);
      // The next checkpoint writes the current format, which the next open reads without a word.
      b.store.checkpoint();
      b.store.close();
      expect(fs.readFileSync(snapshot).subarray(0, 8).toString('latin1'), label).toBe('RCLSNAP\x03');
      const c = await openTemp(home);
      expect(c.store.warnings, label).toEqual([]);
      expect(queryRows(c.store.db, 'SELECT * FROM notes ORDER BY rowid'), label).toEqual(notes);
      c.store.close();
      // Names carry the time to the millisecond: the next case's file must not land on this one's.
      await new Promise((r) => setTimeout(r, 5));
    }
  });

  it('a file that is no format at all (random bytes) is damage, not an old format: set aside as corrupt and rebuilt', async () => {
    const { home, snapshot, notes } = await sampleStore();
    fs.writeFileSync(snapshot, Buffer.from('not a snapshot of any build, just some bytes'));
    const b = await openTemp(home);
    expect(b.store.warnings.join('\n')).toMatch(/store snapshot .* is damaged: the compressed file cannot be read/);
    expect(fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-'))).toHaveLength(1);
    expect(queryRows(b.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(notes);
    b.store.close();
  });
});
