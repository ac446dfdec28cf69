import { afterAll, describe, expect, it } from 'vitest';
import { MEMORY_FTS } from '../../src/core/memory/memorySchema';
import { decodeLengths, forgetLengths, heldLengths, noteJoinedRows } from '../../src/core/search/docLengths';
import { createFtsTableSql, searchFts, type SearchRequest } from '../../src/core/search/ftsSearch';
import type { Services } from '../../src/core/services';
import { loadSqlJs, queryRows, type Database } from '../../src/core/store/sqlite';
import { analyze } from '../../src/core/text/analyzer';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

const TABLE = 'lengths_fts';
const COLUMNS = 5; // terms, body, created_at, scope, ref

/** Every row's body length as FTS4 has it now, read afresh from %_docsize. */
function truth(db: Database, table = TABLE): Map<number, number> {
  const rows = queryRows(db, `SELECT docid, size FROM ${table}_docsize ORDER BY docid`);
  const out = new Map<number, number>();
  for (const r of rows) {
    const decoded = decodeLengths(r.size as Uint8Array, 1, COLUMNS);
    if (!decoded) throw new Error(`docsize of ${String(r.docid)} does not decode`);
    out.set(Number(r.docid), decoded[0] as number);
  }
  return out;
}

/** The held lengths agree with %_docsize on every row there is; false when none are held. */
function heldIsExact(db: Database, table = TABLE): boolean {
  const held = heldLengths(db, table);
  if (!held) return false;
  for (const [docid, length] of truth(db, table)) expect(held[docid], `docid ${docid}`).toBe(length);
  return true;
}

function words(n: number, seed: number): string {
  return Array.from({ length: n }, (_, i) => `w${(seed * 7 + i * 3) % 11}`).join(' ');
}

function insert(db: Database, body: string, docid?: number): void {
  if (docid === undefined) db.run(`INSERT INTO ${TABLE}(terms, body, created_at, scope, ref) VALUES (?, ?, 0, 's', 'r')`, [analyze(body), body]);
  else db.run(`INSERT INTO ${TABLE}(docid, terms, body, created_at, scope, ref) VALUES (?, ?, ?, 0, 's', 'r')`, [docid, analyze(body), body]);
}

const opened: Services[] = [];
afterAll(() => {
  for (const s of opened) s.store.close();
});

describe('document lengths held per connection', () => {
  it('stay exact through appends, updates, deletes, reused and explicit docids (re-indexed in place), rollbacks, a rebuild and an export', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    db.exec(createFtsTableSql(TABLE, ['ref']));
    for (let i = 0; i < 60; i++) insert(db, words(1 + (i % 9), i));
    expect(heldLengths(db, TABLE)).toBeUndefined();
    noteJoinedRows(db, TABLE, 10, 60, COLUMNS); // below the share: nothing loaded
    expect(heldLengths(db, TABLE)).toBeUndefined();
    noteJoinedRows(db, TABLE, 60, 60, COLUMNS);
    expect(queryRows(db, 'SELECT name FROM temp.sqlite_master'), 'loaded by the next search, not at the end of this one').toEqual([]);
    expect(heldIsExact(db)).toBe(true);

    insert(db, words(13, 1)); // appended above the held docids
    expect(queryRows(db, 'SELECT docid FROM temp.recollect_doc_lengths_changed'), 'an append fires no trigger: imports pay nothing').toEqual([]);
    expect(heldIsExact(db)).toBe(true);
    db.run(`UPDATE ${TABLE} SET terms = ? WHERE docid = 5`, [analyze(words(17, 2))]);
    expect(heldIsExact(db)).toBe(true);
    db.run(`DELETE FROM ${TABLE} WHERE docid = 7`);
    insert(db, words(21, 3), 7); // an explicit docid below the top, as history events are indexed
    expect(heldIsExact(db)).toBe(true);
    db.run(`DELETE FROM ${TABLE} WHERE docid = (SELECT max(docid) FROM ${TABLE})`);
    insert(db, words(2, 4)); // takes the deleted top docid again, with another length
    expect(heldIsExact(db)).toBe(true);

    // Rows read inside a transaction that then rolls back: a later row at the same docid has another length.
    db.exec('BEGIN');
    insert(db, words(3, 5));
    expect(heldIsExact(db)).toBe(true);
    db.exec('ROLLBACK');
    insert(db, words(19, 6));
    expect(heldLengths(db, TABLE), 'the rollback turned the bookkeeping back: the lengths are dropped, not served stale').toBeUndefined();
    noteJoinedRows(db, TABLE, 60, 60, COLUMNS);
    expect(heldIsExact(db)).toBe(true);

    // A rebuild rewrites every row: past half the table changed, the lengths are dropped and loaded afresh.
    db.run(`INSERT INTO ${TABLE}(${TABLE}) VALUES ('rebuild')`);
    expect(heldLengths(db, TABLE)).toBeUndefined();
    expect(queryRows(db, `SELECT name FROM temp.sqlite_master WHERE type = 'trigger'`), 'writes no longer pay for a record no one reads').toEqual([]);
    noteJoinedRows(db, TABLE, 60, 60, COLUMNS);
    expect(heldIsExact(db)).toBe(true);

    // The store's snapshot export (sql.js may reopen the connection) loses nothing either way.
    db.export();
    insert(db, words(5, 7));
    db.run(`UPDATE ${TABLE} SET terms = ? WHERE docid = 3`, [analyze(words(23, 8))]);
    if (heldLengths(db, TABLE)) expect(heldIsExact(db)).toBe(true);

    // A table dropped and made again takes its triggers with it: nothing stale is served.
    db.exec(`DROP TABLE ${TABLE}`);
    db.exec(createFtsTableSql(TABLE, ['ref']));
    for (let i = 0; i < 80; i++) insert(db, words(1 + ((i * 5) % 7), i + 100));
    expect(heldLengths(db, TABLE)).toBeUndefined();
    noteJoinedRows(db, TABLE, 80, 80, COLUMNS);
    expect(heldIsExact(db)).toBe(true);
    forgetLengths(db, TABLE);
    db.close();
  });

  it('searches give the joined answer when the lengths check fails, and when a rollback took the temporary tables the lengths were loaded into', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    db.exec(createFtsTableSql(TABLE, ['ref']));
    for (let i = 0; i < 60; i++) insert(db, `${words(1 + (i % 9), i)}${i % 4 ? ' w3 w5' : ''}`);
    const req: SearchRequest = { query: 'w3 w5', limit: 7, sort: 'relevance', now: 0 };
    const joined = searchFts(db, TABLE, req); // nothing held yet: the join
    expect(joined.ok && joined.hits.length).toBe(7);

    db.exec('BEGIN');
    noteJoinedRows(db, TABLE, 60, 60, COLUMNS);
    expect(searchFts(db, TABLE, req)).toEqual(joined); // loaded in this search, inside the transaction
    expect(queryRows(db, "SELECT name FROM temp.sqlite_master WHERE type = 'table'").length).toBe(2);
    db.exec('ROLLBACK');
    expect(queryRows(db, 'SELECT name FROM temp.sqlite_master')).toEqual([]);
    expect(searchFts(db, TABLE, req), 'the check names tables that are gone: dropped, and joined').toEqual(joined);

    noteJoinedRows(db, TABLE, 60, 60, COLUMNS);
    expect(searchFts(db, TABLE, req)).toEqual(joined);
    db.run(`UPDATE temp.recollect_doc_lengths SET version = version + 7`); // as if the bookkeeping were turned back
    insert(db, `w3 w5 ${words(30, 9)}`);
    const after = searchFts(db, TABLE, req);
    forgetLengths(db, TABLE);
    expect(after, 'the check failed: dropped, and joined').toEqual(searchFts(db, TABLE, req));
    db.close();
  });

  it('follow what another process writes (journal catch-up through the same connection), so searches match a fresh open', async () => {
    const home = tempHome('doc-lengths');
    const a = await openTemp(home);
    opened.push(a);
    for (let i = 0; i < 40; i++) await a.memory.remember({ statement: `release ${words(2 + (i % 6), i)}${i % 3 ? ' cache' : ''}` }, 'vitest');
    const b = await openTemp(home);
    opened.push(b);
    const req: SearchRequest = { query: 'release cache', limit: 10, sort: 'relevance', now: Date.now() };
    for (let i = 0; i < 3; i++) expect(searchFts(b.store.db, MEMORY_FTS, req).ok).toBe(true);
    expect(heldLengths(b.store.db, MEMORY_FTS), 'the searches joined more rows than half the table').toBeDefined();

    // Another process appends rows and replaces a fact (its old row leaves the index, a new one comes in).
    for (let i = 0; i < 15; i++) await a.memory.remember({ statement: `cache release ${words(9 + (i % 4), i + 50)}` }, 'vitest');
    await a.memory.saveFact({ subject: 'build', predicate: 'uses', object: 'vite release cache' }, 'vitest');
    b.store.refresh();
    expect(searchFts(b.store.db, MEMORY_FTS, req).ok).toBe(true); // the lengths now hold that fact's docid, the table's last
    // Replacing the last row frees its docid, and the next row takes it again with another length.
    await a.memory.saveFact({ subject: 'build', predicate: 'uses', object: 'esbuild release cache with a much longer text now' }, 'vitest');
    b.store.refresh();
    const held = searchFts(b.store.db, MEMORY_FTS, req);
    for (const [docid, length] of truth(b.store.db, MEMORY_FTS)) expect(heldLengths(b.store.db, MEMORY_FTS)?.[docid]).toBe(length);

    const fresh = await openTemp(home);
    opened.push(fresh);
    expect(heldLengths(fresh.store.db, MEMORY_FTS)).toBeUndefined();
    expect(held).toEqual(searchFts(fresh.store.db, MEMORY_FTS, req));
  });
});
