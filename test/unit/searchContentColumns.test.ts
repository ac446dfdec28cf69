import { describe, expect, it } from 'vitest';
import { readByDocid } from '../../src/core/search/contentColumns';
import { createFtsTableSql } from '../../src/core/search/ftsSearch';
import { loadSqlJs, queryRows, type Database, type SqlValue } from '../../src/core/store/sqlite';
import { WASM_PATH } from './helpers/tempStore';

async function freshDb(): Promise<Database> {
  const SQL = await loadSqlJs(WASM_PATH);
  return new SQL.Database();
}

function read(db: Database, table: string, docids: number[], columns: string[], withTimes: boolean): SqlValue[][] {
  const out: SqlValue[][] = [];
  readByDocid(db, table, docids, columns, withTimes, (values) => out.push(values));
  return out.sort((a, b) => Number(a[0]) - Number(b[0]));
}

/** The same columns read through the virtual table, as searchFts read them before. */
function throughTable(db: Database, table: string, docids: number[], columns: string[], withTimes: boolean): SqlValue[][] {
  const cols = withTimes ? ['created_at', ...columns] : columns;
  return queryRows(db, `SELECT docid${cols.map((c) => `, ${c}`).join('')} FROM ${table} WHERE docid IN (${docids.join(',')}) ORDER BY docid`).map((r) => [r.docid ?? null, ...cols.map((c) => r[c] ?? null)]);
}

describe('readByDocid reads the stored columns from the FTS4 content table', () => {
  it('answers exactly as the virtual table for any columns, with and without created_at, skipping docids that are not there', async () => {
    const db = await freshDb();
    db.exec(createFtsTableSql('docs', ['ref', 'session_id']));
    for (let i = 1; i <= 30; i++) {
      db.run('INSERT INTO docs (docid, body, created_at, scope, ref, session_id) VALUES (?, ?, ?, ?, ?, ?)', [i * 3, `text ${i} café`, 1_700_000_000_000 + i, i % 2 ? 'global' : 'project:x', i % 5 ? `note:${i}` : null, `s${i % 4}`]);
    }
    const ids = [3, 6, 7, 30, 90, 91];
    for (const columns of [['body'], ['body', 'ref', 'scope'], ['session_id', 'body'], []]) {
      for (const withTimes of [false, true]) {
        const ours = read(db, 'docs', ids, columns, withTimes);
        expect(ours, `${columns.join(',')} ${withTimes}`).toEqual(throughTable(db, 'docs', ids, columns, withTimes));
        expect(ours.map((r) => r[0])).toEqual([3, 6, 30, 90]);
      }
    }
  });

  it('follows a table rebuilt with its columns in another order, and reads an external-content table through the table', async () => {
    const db = await freshDb();
    db.exec(createFtsTableSql('docs', ['a', 'b']));
    db.run("INSERT INTO docs (docid, body, created_at, scope, a, b) VALUES (1, 'x', 5, 'global', 'a1', 'b1')");
    expect(read(db, 'docs', [1], ['a', 'b'], true)).toEqual([[1, 5, 'a1', 'b1']]);
    // Same name, columns swapped: the names learnt first no longer fit and are read again.
    db.exec('DROP TABLE docs');
    db.exec(createFtsTableSql('docs', ['b', 'a']));
    db.run("INSERT INTO docs (docid, body, created_at, scope, a, b) VALUES (1, 'x', 6, 'global', 'a2', 'b2')");
    expect(read(db, 'docs', [1], ['a', 'b'], true)).toEqual([[1, 6, 'a2', 'b2']]);

    db.exec('CREATE TABLE src (id INTEGER PRIMARY KEY, body, created_at, scope)');
    db.exec("INSERT INTO src VALUES (4, 'external text', 9, 'global')");
    db.exec("CREATE VIRTUAL TABLE ext USING fts4(content='src', body, created_at, scope)");
    db.exec("INSERT INTO ext(docid, body, created_at, scope) VALUES (4, 'external text', 9, 'global')");
    expect(read(db, 'ext', [4], ['body', 'scope'], true)).toEqual([[4, 9, 'external text', 'global']]);
  });

  it('reads an index led by docid that holds the columns instead of the table, the same values, and the table again once it is dropped', async () => {
    const db = await freshDb();
    db.exec(createFtsTableSql('docs', ['ref']));
    for (let i = 1; i <= 40; i++) db.run('INSERT INTO docs (docid, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)', [i, `text ${i}`, 1_700_000_000_000 + i, 'global', `fact:${i}`]);
    db.exec('CREATE INDEX docs_by_docid ON docs_content(docid, c2created_at, c4ref)');
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = (sql: string, params?: never) => {
      prepared.push(sql);
      return prepare(sql, params);
    };
    const ids = [2, 5, 40, 41];
    expect(read(db, 'docs', ids, ['ref'], true)).toEqual(throughTable(db, 'docs', ids, ['ref'], true));
    const select = prepared.filter((sql) => sql.includes('json_each(?)'));
    expect(select.at(-1)).toContain('INDEXED BY docs_by_docid');
    const plan = queryRows(db, `EXPLAIN QUERY PLAN ${(select.at(-1) as string).replace('json_each(?)', "json_each('[2]')")}`).map((r) => String(r.detail));
    expect(plan.join(' | ')).toContain('COVERING INDEX docs_by_docid');
    // A column the index does not hold: the table, as before.
    expect(read(db, 'docs', ids, ['body', 'ref'], false)).toEqual(throughTable(db, 'docs', ids, ['body', 'ref'], false));
    expect(prepared.filter((sql) => sql.includes('json_each(?)')).at(-1)).not.toContain('INDEXED BY');
    db.exec('DROP INDEX docs_by_docid');
    expect(read(db, 'docs', ids, ['ref'], true)).toEqual(throughTable(db, 'docs', ids, ['ref'], true));
  });

  it('reads thousands of rows in one call (the ties at a common word\'s cut), negative docids and repeats included', async () => {
    const db = await freshDb();
    db.exec(createFtsTableSql('docs', ['ref']));
    db.exec('BEGIN');
    for (let i = -20; i <= 3000; i++) db.run('INSERT INTO docs (docid, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)', [i, `row ${i}`, i % 11 ? 1_700_000_000_000 + i : null, 'global', `r${i}`]);
    db.exec('COMMIT');
    const ids = [...Array.from({ length: 2600 }, (_, k) => k * 3 - 30), 7, 7, 4_000_000];
    const ours = read(db, 'docs', ids, ['ref'], true);
    expect(ours.length).toBe(new Set(ids.filter((d) => d >= -20 && d <= 3000)).size);
    expect(ours).toEqual(throughTable(db, 'docs', ids, ['ref'], true));
  });
});
