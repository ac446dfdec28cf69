import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptDatabase } from '../../src/core/store/adoptDatabase';
import { CHUNK_BYTES, CHUNKED_MAGIC, chunkBytesFor, decodeChunked, decodeChunkedSync, encodeChunked, encodeChunkedSync } from '../../src/core/store/chunkedFrame';
import { readSnapshot, readSnapshotAsync } from '../../src/core/store/snapshot';
import { loadSqlJs, queryRows } from '../../src/core/store/sqlite';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

/** Cold open (issue 2): the chunked snapshot frame and handing the bytes to sql.js without a copy. */

/** A real store's database, large enough for many 4 KB chunks. */
async function sampleDatabase(): Promise<{ home: string; database: Buffer; notes: Record<string, unknown>[] }> {
  const home = tempHome('chunked');
  const s = await openTemp(home);
  for (let i = 0; i < 60; i++) await s.memory.remember({ statement: `chunked frame note ${i}: ${'the snapshot is cut into pieces '.repeat(8)}` }, 'test');
  s.store.checkpoint();
  const notes = queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid');
  s.store.close();
  const database = readSnapshot(path.join(home, 'store.sqlite'));
  if (!database) throw new Error('no snapshot written');
  return { home, database: Buffer.from(database), notes };
}

const CHUNK = 4096;

describe('chunked snapshot frame', () => {
  it('round-trips through the sync and the thread-pool paths, many chunks or one, to the same bytes', async () => {
    const { database } = await sampleDatabase();
    expect(database.length).toBeGreaterThan(8 * CHUNK);
    const single = chunkBytesFor(database.length, 2);
    for (const frame of [encodeChunkedSync(database, CHUNK), await encodeChunked(database, 3, CHUNK), encodeChunkedSync(database, single), await encodeChunked(database, 2, single)]) {
      expect(frame.subarray(0, 8).equals(CHUNKED_MAGIC)).toBe(true);
      for (const decoded of [decodeChunkedSync(frame), await decodeChunked(frame)]) {
        expect(decoded.equals(database)).toBe(true);
        // Memory of its own, whole: what lets sql.js adopt it without a copy.
        expect([decoded.byteOffset, decoded.buffer.byteLength]).toEqual([0, database.length]);
      }
    }
    expect(encodeChunkedSync(database, CHUNK).readUInt32LE(20)).toBe(Math.ceil(database.length / CHUNK));
    expect(encodeChunkedSync(database, single).readUInt32LE(20)).toBe(1);
    expect(chunkBytesFor(database.length, 8)).toBe(CHUNK_BYTES);
  });

  it('a flipped byte anywhere (header, chunk table, any chunk), a cut or padded file is an error on both paths', async () => {
    const { database } = await sampleDatabase();
    const good = encodeChunkedSync(database, CHUNK);
    const count = Math.ceil(database.length / CHUNK);
    const headerLength = 24 + count * 36 + 32;
    const flip = (at: number) => {
      const b = Buffer.from(good);
      b[at] = (b[at] ?? 0) ^ 0x01;
      return b;
    };
    const cases: [string, Buffer, RegExp][] = [
      ['size', flip(9), /checksum does not match \(header\)/],
      ['chunk table', flip(24 + 5 * 36 + 7), /checksum does not match \(header\)/],
      ['header hash', flip(headerLength - 1), /checksum does not match \(header\)/],
      ['first chunk', flip(headerLength + 3), /checksum does not match \(chunk 0\)/],
      ['last chunk', flip(good.length - 2), new RegExp(`checksum does not match \\(chunk ${count - 1}\\)`)],
      ['cut short', good.subarray(0, good.length - 1), /past the file's/],
      ['padded', Buffer.concat([good, Buffer.from([0])]), /the chunks end at byte \d+ but the file has \d+/],
      ['header only', good.subarray(0, 30), /more than 30 bytes can hold|shorter than the frame header/],
    ];
    for (const [label, damaged, message] of cases) {
      expect(() => decodeChunkedSync(damaged), label).toThrow(message);
      await expect(decodeChunked(damaged), label).rejects.toThrow(message);
    }
  });

  it('a store opens a many-chunk snapshot to identical data without warnings, and a damaged one is set aside and rebuilt', async () => {
    const { home, database, notes } = await sampleDatabase();
    const file = path.join(home, 'store.sqlite');
    fs.writeFileSync(file, encodeChunkedSync(database, CHUNK));
    expect(Buffer.from((await readSnapshotAsync(file)) ?? []).equals(database)).toBe(true);
    const a = await openTemp(home);
    expect(a.store.warnings).toEqual([]);
    expect(queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(notes);
    a.store.close();

    const damaged = encodeChunkedSync(database, CHUNK);
    damaged[damaged.length - 100] = (damaged[damaged.length - 100] ?? 0) ^ 0xff;
    fs.writeFileSync(file, damaged);
    const b = await openTemp(home);
    expect(b.store.warnings.join('\n')).toMatch(/damaged: the compressed file cannot be read \(the checksum does not match \(chunk \d+\)/);
    expect(fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-'))).toHaveLength(1);
    expect(queryRows(b.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(notes);
    b.store.close();
  });
});

describe('adoptDatabase', () => {
  it('sql.js takes over the bytes themselves (a header write lands in them), and export() is still a separate copy', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const { database, notes } = await sampleDatabase();
    const bytes = new Uint8Array(database.length);
    bytes.set(database);
    const db = adoptDatabase(SQL, bytes);
    expect(Object.prototype.hasOwnProperty.call(bytes, 'slice')).toBe(false);
    expect(queryRows(db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(notes);
    // user_version lives in page 1's header (offset 60): rewriting it does not grow the file, so
    // sql.js writes into the very array it adopted.
    db.exec('PRAGMA user_version = 7');
    expect(Buffer.from(bytes.buffer).readUInt32BE(60)).toBe(7);
    const exported = db.export();
    expect(exported.buffer).not.toBe(bytes.buffer);
    expect(Buffer.from(exported).readUInt32BE(60)).toBe(7);
    db.close();
  });

  it('bytes that share memory with something else are copied, and the original stays untouched', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const { database } = await sampleDatabase();
    const shared = Buffer.alloc(database.length + 16);
    database.copy(shared, 16);
    const view = new Uint8Array(shared.buffer, shared.byteOffset + 16, database.length);
    const db = adoptDatabase(SQL, view);
    db.exec('PRAGMA user_version = 9');
    expect(Buffer.from(db.export()).readUInt32BE(60)).toBe(9);
    expect(shared.subarray(16).equals(database)).toBe(true);
    db.close();
  });
});
