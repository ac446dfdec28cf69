import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DatabaseFile } from '../../src/core/store/databaseFile';
import { adoptPaged } from '../../src/core/store/databaseFile';
import { zeroFreePagesIn } from '../../src/core/store/freePages';
import { PagedContents } from '../../src/core/store/pagedContents';
import { encodePagedSync, PAGED_MAGIC, PagedFrame } from '../../src/core/store/pagedFrame';
import { writeCapture, writeCaptureSync } from '../../src/core/store/pagedSnapshot';
import { readSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryRows, queryScalar, type Database } from '../../src/core/store/sqlite';
import { openServices } from '../../src/core/services';
import { expectRebuiltAfterDamage } from './helpers/pagedStore';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

/** A store that reads its snapshot only on demand (no read-ahead), so a test knows which chunks are still unread. */
const openLazy = (home: string) => openServices({ home, wasmPath: WASM_PATH, readAhead: false });

/** Cold open (issue 2): the snapshot read page by page, on demand. */

function writeFrame(file: string, database: Uint8Array, chunkBytes: number): void {
  fs.writeFileSync(file, Buffer.concat(encodePagedSync(database, chunkBytes)));
}

function openFrame(file: string): PagedFrame {
  return PagedFrame.fromFd(file, fs.openSync(file, 'r'));
}

/** Flips one byte of the file in place (same inode, so a reader's open descriptor sees it). */
function flipInPlace(file: string, at: number): void {
  const fd = fs.openSync(file, 'r+');
  const b = Buffer.alloc(1);
  fs.readSync(fd, b, 0, 1, at);
  b[0] = (b[0] ?? 0) ^ 0xff;
  fs.writeSync(fd, b, 0, 1, at);
  fs.closeSync(fd);
}

/** A real store's database with enough rows for many small chunks. */
async function sampleStore(notes = 80): Promise<{ home: string; database: Buffer; rows: Record<string, unknown>[] }> {
  const home = tempHome('paged');
  const s = await openTemp(home);
  for (let i = 0; i < notes; i++) await s.memory.remember({ statement: `paged note ${i}: ${'read only the pages a query touches '.repeat(6)}` }, 'test');
  s.store.checkpoint();
  const rows = queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid');
  s.store.close();
  const database = readSnapshot(path.join(home, 'store.sqlite'));
  if (!database) throw new Error('no snapshot written');
  return { home, database: Buffer.from(database), rows };
}

/** A small seeded generator, so a failure replays the same writes. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = ['alpha', 'beta', 'gamma', 'delta', 'chunk', 'page', 'brotli', 'journal', 'vacuum', 'index'];

/** The same random SQL on both databases: inserts of varied sizes, updates, deletes, an index. */
function randomWork(dbs: Database[], seed: number, steps: number): void {
  const rnd = mulberry32(seed);
  const text = () => Array.from({ length: 1 + Math.floor(rnd() * 400) }, () => words[Math.floor(rnd() * words.length)]).join(' ');
  for (const db of dbs) db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT, n INTEGER)');
  for (let i = 0; i < steps; i++) {
    const r = rnd();
    const body = text();
    const n = Math.floor(rnd() * 1000);
    for (const db of dbs) {
      if (r < 0.6) db.run('INSERT INTO t (body, n) VALUES (?, ?)', [body, n]);
      else if (r < 0.8) db.run('UPDATE t SET body = ? WHERE n % 7 = ?', [body, n % 7]);
      else if (r < 0.95) db.run('DELETE FROM t WHERE n % 13 = ?', [n % 13]);
      else db.exec('CREATE INDEX IF NOT EXISTS t_n ON t (n)');
    }
  }
}

/**
 * A database file's bytes with its free pages zeroed, as every snapshot is written: two
 * databases that did the same work are equal but for what their free pages still hold.
 */
function freeZeroed(bytes: Uint8Array): Buffer {
  const out = Buffer.from(bytes);
  zeroFreePagesIn(out);
  return out;
}

/** The database file as sql.js sees it, read a page at a time as SQLite does. */
function bytesOf(contents: PagedContents): Buffer {
  const out = Buffer.alloc(contents.size);
  for (let at = 0; at < contents.size; at += 4096) out.set(contents.subarray(at, Math.min(contents.size, at + 4096)), at);
  return out;
}

describe('paged snapshot (frame version 3)', () => {
  it('a chunk loaded again under a small cache is decompressed into an evicted chunk\'s buffer, with the same bytes', () => {
    const chunkBytes = 4096;
    const rand = mulberry32(3);
    const database = Buffer.alloc(chunkBytes * 8);
    for (let i = 0; i < database.length; i++) database[i] = rand() < 0.5 ? Math.floor(rand() * 256) : 32; // compressible, not trivially
    const file = path.join(tempHome('paged-reuse'), 'paged.sqlite');
    writeFrame(file, database, chunkBytes);
    const contents = new PagedContents(openFrame(file), undefined, undefined, 2 * chunkBytes);
    const buffers = new Set<ArrayBufferLike>();
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 8; i++) {
        const at = i * chunkBytes + 100;
        const view = contents.subarray(at, at + 1000);
        expect(Buffer.from(view).equals(database.subarray(at, at + 1000))).toBe(true);
        buffers.add(view.buffer);
      }
    }
    expect(contents.cacheStats.reloads).toBeGreaterThan(30);
    // Two chunks held and the one just evicted: a new buffer per load would be 48.
    expect(buffers.size).toBeLessThanOrEqual(3);
    contents.close();
  });

  for (const chunkBytes of [16384, 10000]) {
    it(`random writes through paged contents (${chunkBytes}-byte chunks) give the same database as plain sql.js, through two checkpoints`, async () => {
      const SQL = await loadSqlJs(WASM_PATH);
      const { home, database } = await sampleStore(40);
      const file = path.join(home, 'paged.sqlite');
      writeFrame(file, database, chunkBytes);
      const contents = new PagedContents(openFrame(file));
      const paged = adoptPaged(SQL, contents);
      if (!paged) throw new Error('sql.js did not take the paged contents');
      const plain = new SQL.Database(database);
      expect(contents.loadedChunks).toBeLessThan(Math.ceil(database.length / chunkBytes));

      randomWork([paged, plain], 7, 150);
      expect(freeZeroed(paged.export()).equals(freeZeroed(plain.export()))).toBe(true);
      expect(queryScalar(paged, 'PRAGMA integrity_check')).toBe('ok');
      expect(contents.size).toBe(Number(queryScalar(paged, 'PRAGMA page_count')) * Number(queryScalar(paged, 'PRAGMA page_size')));

      // Checkpoint from the contents: unchanged chunks copied compressed, changed ones recompressed.
      for (const seed of [11, 12]) {
        const fileBytes = freeZeroed(bytesOf(contents));
        const capture = contents.capture();
        expect(capture.parts.some((p) => !('raw' in p))).toBe(true);
        const next = writeCaptureSync(file, capture);
        if (!next) throw new Error('the checkpoint file was not reopened');
        contents.rebase(next, capture).close();
        expect(contents.dirtyChunks).toBe(0);
        // The snapshot holds exactly the file sql.js had, its free pages zeroed (freePages.ts), and reads as the same database.
        const raw = Buffer.from(readSnapshot(file) ?? []);
        expect(raw.equals(fileBytes)).toBe(true);
        const onDisk = new SQL.Database(raw);
        expect(queryScalar(onDisk, 'PRAGMA integrity_check')).toBe('ok');
        for (const sql of ['SELECT * FROM sqlite_master ORDER BY name', 'SELECT * FROM t ORDER BY id', 'SELECT * FROM notes ORDER BY rowid']) expect(queryRows(onDisk, sql)).toEqual(queryRows(plain, sql));
        onDisk.close();
        randomWork([paged, plain], seed, 60);
        expect(freeZeroed(paged.export()).equals(freeZeroed(plain.export()))).toBe(true);
      }
      paged.close();
      plain.close();
      contents.close();
    });
  }

  it('sql.js takes paged contents larger than 4 GiB (no typed array of the file\'s size is made) and reads and writes them', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const { home, database, rows } = await sampleStore(20);
    const file = path.join(home, 'paged.sqlite');
    writeFrame(file, database, 65536);
    const contents = new PagedContents(openFrame(file));
    // A page written far past the database's end, as a file grown by a year of writes would be.
    const far = 5 * 1024 ** 3;
    contents.set(new Uint8Array(4096).fill(7), far);
    expect(contents.size).toBe(far + 4096);
    const paged = adoptPaged(SQL, contents);
    if (!paged) throw new Error('sql.js did not take the paged contents');
    expect(queryRows(paged, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
    paged.run('CREATE TABLE past (body TEXT)');
    paged.run('INSERT INTO past VALUES (?)', ['written into a file over 4 GiB']);
    expect(queryScalar(paged, 'SELECT body FROM past')).toBe('written into a file over 4 GiB');
    expect(Buffer.from(contents.subarray(far, far + 4)).equals(Buffer.from([7, 7, 7, 7]))).toBe(true);
    paged.close();
    contents.close();
  });

  it('written chunks spilled under a small cache are evicted and read back, and checkpoints (on this thread, and in the background with writes meanwhile) hold the database plain sql.js has', async () => {
    const chunkBytes = 16384;
    const SQL = await loadSqlJs(WASM_PATH);
    const { home, database } = await sampleStore(40);
    const file = path.join(home, 'paged.sqlite');
    writeFrame(file, database, chunkBytes);
    const spillFile = `${file}.tmp-${process.pid}-spill`;
    const contents = new PagedContents(openFrame(file), undefined, undefined, 4 * chunkBytes, spillFile);
    const paged = adoptPaged(SQL, contents);
    if (!paged) throw new Error('sql.js did not take the paged contents');
    const plain = new SQL.Database(database);
    for (let round = 0; round < 4; round++) {
      randomWork([paged, plain], 20 + round, 60);
      expect(contents.spillUnsaved()).toBe(true);
    }
    const stats = contents.cacheStats;
    expect(stats.spilledChunks).toBeGreaterThan(4);
    expect(stats.unsavedChunks).toBe(0);
    expect(stats.evictions).toBeGreaterThan(0);
    expect(stats.reloads).toBeGreaterThan(0);
    expect(freeZeroed(paged.export()).equals(freeZeroed(plain.export()))).toBe(true);
    expect(queryScalar(paged, 'PRAGMA integrity_check')).toBe('ok');

    // A background checkpoint reads written chunks from the spill while SQLite writes on: the slots it reads are not reused meanwhile.
    const captured = freeZeroed(bytesOf(contents));
    const capture = contents.capture();
    expect(capture.parts.some((p) => 'slot' in p)).toBe(true);
    expect(capture.parts.some((p) => 'raw' in p)).toBe(false);
    randomWork([paged, plain], 31, 60);
    expect(contents.spillUnsaved()).toBe(true);
    const next = await writeCapture(file, capture, () => true);
    if (!next) throw new Error('the checkpoint file was not reopened');
    contents.rebase(next, capture).close();
    expect(Buffer.from(readSnapshot(file) ?? []).equals(captured)).toBe(true);
    expect(contents.dirtyChunks).toBeGreaterThan(0); // written after the capture

    // On this thread, after which nothing is unsaved and the spill file is empty again.
    const now = freeZeroed(bytesOf(contents));
    const sync = contents.capture({ copy: false });
    const written = writeCaptureSync(file, sync);
    if (!written) throw new Error('the checkpoint file was not reopened');
    contents.rebase(written, sync).close();
    expect(Buffer.from(readSnapshot(file) ?? []).equals(now)).toBe(true);
    expect(contents.dirtyChunks).toBe(0);
    expect(contents.cacheStats.spilledChunks).toBe(0);
    expect(fs.statSync(spillFile).size).toBe(0);
    expect(freeZeroed(paged.export()).equals(freeZeroed(plain.export()))).toBe(true);
    paged.close();
    plain.close();
    contents.close();
    expect(fs.existsSync(spillFile)).toBe(false);
  });

  it('clean chunks the cache drops are read again from their uncompressed copies, a look-up\'s pages alone and a scan\'s chunks whole, a written chunk never from a stale one, through checkpoints; without a writable copies file nothing changes', async () => {
    const chunkBytes = 16384;
    const SQL = await loadSqlJs(WASM_PATH);
    const { home, database } = await sampleStore(40);
    const file = path.join(home, 'paged.sqlite');
    const readAll = (db: Database) => queryRows(db, 'SELECT * FROM notes ORDER BY rowid');
    for (const copyFile of [`${file}.tmp-${process.pid}-copies`, path.join(home, 'no such folder', 'copies')]) {
      writeFrame(file, database, chunkBytes);
      const contents = new PagedContents(openFrame(file), undefined, undefined, 3 * chunkBytes, `${file}.tmp-${process.pid}-spill`, copyFile);
      const paged = adoptPaged(SQL, contents);
      if (!paged) throw new Error('sql.js did not take the paged contents');
      const plain = new SQL.Database(Buffer.from(database)); // sql.js writes into the array it is given
      for (let round = 0; round < 3; round++) {
        expect(readAll(paged)).toEqual(readAll(plain));
        randomWork([paged, plain], 50 + round, 40);
        expect(readAll(paged)).toEqual(readAll(plain));
        // A checkpoint on this thread: written chunks become clean, and their copies are made from their new bytes.
        const sync = contents.capture({ copy: false });
        const written = writeCaptureSync(file, sync);
        if (!written) throw new Error('the checkpoint file was not reopened');
        contents.rebase(written, sync).close();
        // What the checkpoint wrote is what the contents hold, copies and all.
        expect(Buffer.from(readSnapshot(file) ?? []).equals(bytesOf(contents))).toBe(true);
      }
      expect(readAll(paged)).toEqual(readAll(plain));
      expect(freeZeroed(paged.export()).equals(freeZeroed(plain.export()))).toBe(true);
      expect(queryScalar(paged, 'PRAGMA integrity_check')).toBe('ok');
      const stats = contents.cacheStats;
      expect(stats.reloads).toBeGreaterThan(10);
      if (copyFile.includes('no such folder')) {
        expect(stats.copyReads).toBe(0);
        expect(stats.copyPageReads).toBe(0);
        expect(stats.copiedChunks).toBe(0);
      } else {
        expect(stats.copiedChunks).toBeGreaterThan(3);
        expect(stats.copyReads).toBeGreaterThan(10);
        expect(fs.existsSync(copyFile)).toBe(true);
        // A page asked alone comes straight from the chunk's copy; pages asked one after another (a scan) load the chunk whole.
        const whole = bytesOf(contents);
        const pages = chunkBytes / 4096;
        const before = contents.cacheStats;
        for (let i = 0; i * chunkBytes < contents.size; i++) {
          const at = Math.min(i * chunkBytes + ((i * 3) % pages) * 4096, contents.size - 4096);
          contents.subarray(0, 4096); // another read between: never one that continues a scan
          expect(Buffer.from(contents.subarray(at, at + 4096)).equals(whole.subarray(at, at + 4096))).toBe(true);
        }
        const looked = contents.cacheStats;
        expect(looked.copyPageReads).toBeGreaterThan(before.copyPageReads);
        expect(looked.copyReads).toBe(before.copyReads);
        expect(Buffer.from(bytesOf(contents)).equals(whole)).toBe(true);
        const scanned = contents.cacheStats;
        expect(scanned.copyReads).toBeGreaterThan(looked.copyReads + 3);
        expect(scanned.copyPageReads).toBeLessThanOrEqual(looked.copyPageReads + 1);
      }
      paged.close();
      contents.close();
      expect(fs.existsSync(copyFile)).toBe(false);
      plain.close();
    }
  });

  it('a store opens a version 3 snapshot lazily, checkpoints only what changed, and reopens to the same data', async () => {
    const { home, database, rows } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const a = await openTemp(home);
    expect(a.store.warnings).toEqual([]);
    expect(queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
    await a.memory.remember({ statement: 'written after a lazy open' }, 'test');
    const chunks = Math.ceil(database.length / 4096);
    a.store.checkpoint();
    a.store.close();
    const written = fs.readFileSync(file);
    expect(written.subarray(0, 8).equals(PAGED_MAGIC)).toBe(true);
    expect(written.readUInt32LE(16)).toBe(4096); // a checkpoint keeps the frame's chunk size
    expect(written.readUInt32LE(20)).toBeGreaterThanOrEqual(chunks);
    const b = await openTemp(home);
    expect(b.store.warnings).toEqual([]);
    expect(b.memory.status().entries).toBe(rows.length + 1);
    expect(queryScalar(b.store.db, 'PRAGMA integrity_check')).toBe('ok');
    b.store.close();
  });

  it('a reader keeps reading the file it opened after another store checkpoints over it, and both converge', async () => {
    const { home, database, rows } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const a = await openLazy(home);
    const b = await openTemp(home);
    const unread = a.store.fileStats.loadedChunks;
    for (let round = 0; round < 3; round++) {
      await b.memory.remember({ statement: `b round ${round}` }, 'test');
      b.store.checkpoint();
      await a.memory.remember({ statement: `a round ${round}` }, 'test');
      a.store.checkpoint();
    }
    // A reads pages it never touched before, from the file it opened (replaced on disk since).
    expect(unread).toBeLessThan(Math.ceil(database.length / 4096) / 2);
    expect(queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid').slice(0, rows.length)).toEqual(rows);
    expect(queryScalar(a.store.db, 'PRAGMA integrity_check')).toBe('ok');
    expect(a.memory.status().entries).toBe(rows.length + 6);
    a.store.close();
    b.store.close();
    const c = await openTemp(home);
    expect(c.store.warnings).toEqual([]);
    expect(c.memory.status().entries).toBe(rows.length + 6);
    c.store.close();
  });

  it('the read-ahead loads every chunk in the background, carrying on across a checkpoint that moves the contents to a new file', async () => {
    const { home, database, rows } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const a = await openTemp(home);
    const chunks = Math.ceil(database.length / 4096);
    expect(a.store.fileStats.loadedChunks).toBeLessThan(chunks);
    await a.memory.remember({ statement: 'written while the read-ahead runs' }, 'test');
    a.store.checkpoint();
    await expect.poll(() => a.store.fileStats.loadedChunks, { timeout: 10_000 }).toBeGreaterThanOrEqual(chunks);
    // Every byte is in memory now: the file on disk can go without the database noticing.
    fs.rmSync(file);
    expect(queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid').slice(0, rows.length)).toEqual(rows);
    expect(queryScalar(a.store.db, 'PRAGMA integrity_check')).toBe('ok');
    a.store.close();
  });

  it('VACUUM shrinks the file under the contents: they detach and the checkpoint exports the database', async () => {
    const { home, database } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const a = await openTemp(home);
    a.store.db.exec('CREATE TABLE scratch (body TEXT); INSERT INTO scratch SELECT text FROM notes; INSERT INTO scratch SELECT body FROM scratch;');
    const before = queryRows(a.store.db, 'SELECT * FROM notes ORDER BY rowid');
    const stats = () => (a.store as unknown as { dbFile: DatabaseFile }).dbFile.stats;
    expect(stats().paged).toBe(true);
    a.store.db.exec('DROP TABLE scratch; VACUUM;');
    expect(stats().paged).toBe(false);
    expect(queryScalar(a.store.db, 'PRAGMA freelist_count')).toBe(0);
    await a.memory.remember({ statement: 'after the vacuum' }, 'test');
    a.store.checkpoint();
    a.store.close();
    const b = await openTemp(home);
    expect(queryRows(b.store.db, 'SELECT * FROM notes ORDER BY rowid').slice(0, before.length)).toEqual(before);
    expect(b.memory.status().entries).toBe(before.length + 1);
    expect(queryScalar(b.store.db, 'PRAGMA integrity_check')).toBe('ok');
    b.store.close();
  });

  it('a chunk damaged after the open is an I/O error for SQLite (never data); the file is set aside and the store rebuilt from the journal', async () => {
    const { home, database, rows } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const a = await openLazy(home);
    const frame = openFrame(file);
    const later = frame.entries.slice(Math.floor(frame.entries.length / 2));
    frame.close();
    // Every chunk of the second half, none of which the open read (it reads only a few at the start).
    for (const e of later) flipInPlace(file, e.at + Math.floor(e.length / 2));
    // integrity_check reads every page and lists the ones it could not get: I/O errors (SQLITE_IOERR = 10 in the low byte).
    const report = String(queryScalar(a.store.db, 'PRAGMA integrity_check'));
    const codes = [...report.matchAll(/unable to get the page\. error code=(\d+)/g)].map((m) => Number(m[1]) & 0xff);
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes)).toEqual(new Set([10]));
    // An ordinary query that reaches a damaged page fails as an I/O error.
    const tables = queryRows(a.store.db, "SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => String(r.name));
    expect(() => {
      for (const t of tables) queryRows(a.store.db, `SELECT * FROM "${t}"`);
    }).toThrow(/disk I\/O error/);
    await expectRebuiltAfterDamage(a, home, rows, '\\d+');
    expect(a.store.warnings.join('\n')).toMatch(/damaged: the checksum does not match \(chunk \d+\)\. It was kept at .*corrupt-.* and the memory is rebuilt from the journal/);
    a.store.close();
    const b = await openTemp(home);
    expect(b.store.warnings).toEqual([]);
    expect(b.memory.status().entries).toBe(rows.length);
    b.store.close();
  });

  it('damage in a chunk no query reads is found by the read-ahead after the open, and repaired', async () => {
    const { home, database, rows } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const frame = openFrame(file);
    const middle = frame.entries[Math.floor(frame.entries.length / 2)];
    frame.close();
    if (!middle) throw new Error('no chunks');
    flipInPlace(file, middle.at + 1); // the open checks only the header and chunk 0
    const a = await openTemp(home);
    await expectRebuiltAfterDamage(a, home, rows, '\\d+');
    a.store.close();
  });

  it('a flipped header or first chunk, or a cut file, is refused at open (StoreCorruptError path: set aside, rebuilt)', async () => {
    const { home, database, rows } = await sampleStore();
    const file = path.join(home, 'store.sqlite');
    writeFrame(file, database, 4096);
    const good = fs.readFileSync(file);
    const count = Math.ceil(database.length / 4096);
    const headerLength = 24 + count * 36 + 32;
    const flip = (at: number) => {
      const b = Buffer.from(good);
      b[at] = (b[at] ?? 0) ^ 0x01;
      return b;
    };
    const cases: [Buffer, RegExp][] = [
      [flip(9), /checksum does not match \(header\)/],
      [flip(24 + 3 * 36 + 5), /checksum does not match \(header\)/],
      [flip(headerLength + 2), /checksum does not match \(chunk 0\)/],
      [good.subarray(0, good.length - 3), /past the file's/],
      [Buffer.concat([good, Buffer.from([0])]), /the chunks end at byte \d+ but the file has \d+/],
    ];
    for (const [n, [damaged, message]] of cases.entries()) {
      fs.writeFileSync(file, damaged);
      const s = await openTemp(home);
      expect(s.store.warnings.join('\n')).toMatch(message);
      expect(fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-'))).toHaveLength(n + 1);
      expect(queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid')).toEqual(rows);
      s.store.close();
      writeFrame(file, database, 4096);
    }
  });
});
