import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptPaged } from '../../src/core/store/databaseFile';
import { freeList } from '../../src/core/store/freePages';
import { PagedContents } from '../../src/core/store/pagedContents';
import { encodePagedSync, PagedFrame } from '../../src/core/store/pagedFrame';
import { writeCaptureSync } from '../../src/core/store/pagedSnapshot';
import { readSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryScalar, tuneConnection, type Database } from '../../src/core/store/sqlite';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const CHUNK = 16384;

/** Rows whose text (past a page, so in overflow pages) carries `marker`, then all deleted but `keep`. */
function writeAndDelete(db: Database, marker: string, rows: number, keep = 0): void {
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) db.run('INSERT INTO t (tag, body) VALUES (?, ?)', [marker, `${marker} ${i} `.repeat(900)]);
  db.exec('COMMIT');
  db.run('DELETE FROM t WHERE tag = ? AND rowid NOT IN (SELECT rowid FROM t WHERE tag = ? LIMIT ?)', [marker, marker, keep]);
}

function checkpoint(contents: PagedContents, file: string): ReturnType<PagedContents['capture']> {
  const capture = contents.capture({ copy: false });
  const next = writeCaptureSync(file, capture);
  if (!next) throw new Error('the checkpoint file was not reopened');
  contents.rebase(next, capture).close();
  return capture;
}

describe('free pages', () => {
  it('reads the free list SQLite writes: every free page, as many as freelist_count says', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    db.exec('PRAGMA secure_delete = FAST; CREATE TABLE t (tag TEXT, body TEXT)');
    // Enough pages freed for more than one trunk page (a 4 KB trunk lists 1,022 leaves).
    writeAndDelete(db, 'gone', 1200);
    const bytes = db.export();
    const list = freeList((o, l) => bytes.subarray(o, o + l), bytes.length);
    if (!list) throw new Error('no free list read');
    expect(list.trunks.length).toBeGreaterThan(1);
    expect(list.leaves.length + list.trunks.length).toBe(Number(queryScalar(db, 'PRAGMA freelist_count')));
    expect(new Set([...list.leaves, ...list.trunks.map((t) => t.page)]).size).toBe(list.leaves.length + list.trunks.length);
    db.close();
  });

  it('a checkpoint zeroes what deleted rows left in free pages, again after pages are reused and freed, and rewrites nothing when nothing was freed', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const file = path.join(tempHome('free-pages'), 'paged.sqlite');
    const seed = new SQL.Database();
    seed.exec('CREATE TABLE t (tag TEXT, body TEXT)');
    fs.writeFileSync(file, Buffer.concat(encodePagedSync(seed.export(), CHUNK)));
    seed.close();
    let contents = new PagedContents(PagedFrame.fromFd(file, fs.openSync(file, 'r')));
    let db = adoptPaged(SQL, contents);
    if (!db) throw new Error('sql.js did not take the paged contents');
    tuneConnection(db);
    const onDisk = () => Buffer.from(readSnapshot(file) ?? []);
    // The file as SQLite has it now (export() would hand sql.js a copy of it to write on).
    const live = () => {
      const out = Buffer.alloc(contents.size);
      for (let at = 0; at < contents.size; at += 4096) out.set(contents.subarray(at, at + 4096), at);
      return out;
    };

    writeAndDelete(db, 'first-secret', 60, 5);
    // FAST leaves the freed overflow pages as they were: the bytes are still in the file.
    expect(live().includes('first-secret 7')).toBe(true);
    checkpoint(contents, file);
    expect(Number(queryScalar(db, 'PRAGMA freelist_count'))).toBeGreaterThan(100);
    expect(onDisk().includes('first-secret 7')).toBe(false);
    expect(onDisk().includes('first-secret 2')).toBe(true); // a row kept stays
    expect(live().includes('first-secret 7')).toBe(false);

    // Free pages taken again by new rows, which are then deleted in turn.
    writeAndDelete(db, 'second-secret', 30);
    expect(live().includes('second-secret 3')).toBe(true);
    checkpoint(contents, file);
    expect(onDisk().includes('second-secret')).toBe(false);

    // Nothing written since: the free pages are known clean, and no chunk is written again.
    const idle = contents.capture({ copy: false });
    expect(idle.parts.every((p) => 'hash' in p)).toBe(true);
    idle.done();

    // A process that opens this snapshot knows its free pages are clean: its first checkpoint rewrites none of them.
    db.close();
    contents.close();
    contents = new PagedContents(PagedFrame.fromFd(file, fs.openSync(file, 'r')));
    db = adoptPaged(SQL, contents);
    if (!db) throw new Error('sql.js did not take the paged contents');
    tuneConnection(db);
    const reopened = contents.capture({ copy: false });
    expect(reopened.parts.every((p) => 'hash' in p)).toBe(true);
    reopened.done();
    writeAndDelete(db, 'third-secret', 20);
    checkpoint(contents, file);
    expect(onDisk().includes('third-secret')).toBe(false);
    expect(queryScalar(db, 'PRAGMA integrity_check')).toBe('ok');
    const copy = new SQL.Database(onDisk());
    expect(queryScalar(copy, 'PRAGMA integrity_check')).toBe('ok');
    expect(queryScalar(copy, 'SELECT count(*) FROM t')).toBe(5);
    copy.close();
    db.close();
    contents.close();
  });
});
