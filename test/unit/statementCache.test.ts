import { describe, expect, it } from 'vitest';
import { createFtsTableSql, indexTerms, searchFts } from '../../src/core/search/ftsSearch';
import { loadSqlJs, type Database } from '../../src/core/store/sqlite';
import { freeStatements, keptStatementCount, withCachedStatement } from '../../src/core/store/statementCache';
import { WASM_PATH } from './helpers/tempStore';

async function ftsDb(): Promise<Database> {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database();
  db.exec(createFtsTableSql('t', ['ref']));
  const texts = ['the staging deploy failed twice', 'deploy to staging again', 'unrelated words about lunch', 'staging staging staging'];
  texts.forEach((text, i) => db.run('INSERT INTO t(docid, terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?, ?)', [i + 1, indexTerms(text), text, 1000 + i, 's', `r${i}`]));
  return db;
}

const request = (query: string) => ({ query, limit: 10, now: 5000, columns: ['body', 'ref'] });

describe('statementCache', () => {
  it('answers a repeated search from a kept statement with the same hits, and sees rows written in between', async () => {
    const db = await ftsDb();
    const first = searchFts(db, 't', request('staging'));
    // The first search joins the lengths, after which the connection holds them (docLengths.ts) and
    // checks them on each search: other statements, all kept by the third.
    expect(searchFts(db, 't', request('staging'))).toEqual(first);
    expect(searchFts(db, 't', request('staging'))).toEqual(first);
    const kept = keptStatementCount(db);
    expect(kept).toBeGreaterThan(0);
    expect(searchFts(db, 't', request('staging'))).toEqual(first);
    expect(keptStatementCount(db)).toBe(kept);
    db.run('INSERT INTO t(docid, terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?, ?)', [9, indexTerms('staging once more'), 'staging once more', 2000, 's', 'r9']);
    const later = searchFts(db, 't', request('staging'));
    expect(later.ok && later.total).toBe(4);
    expect(later.ok && later.hits.map((h) => h.docid)).toContain(9);
    db.close();
  });

  it('keeps a statement across export(), which sql.js 1.16 does without freeing statements', async () => {
    const db = await ftsDb();
    const before = searchFts(db, 't', request('deploy'));
    db.export();
    expect(searchFts(db, 't', request('deploy'))).toEqual(before);
    db.close();
  });

  it('gives a nested call of the same SQL its own statement, and keeps at most 48, least recently used first out', async () => {
    const db = await ftsDb();
    const sql = 'SELECT docid FROM t_content WHERE docid >= ? ORDER BY docid';
    const seen: number[][] = [];
    withCachedStatement(db, sql, [1], (outer) => {
      outer.step();
      withCachedStatement(db, sql, [3], (inner) => {
        const ids: number[] = [];
        while (inner.step()) ids.push(Number(inner.get()[0]));
        seen.push(ids);
      });
      const ids = [Number(outer.get()[0])];
      while (outer.step()) ids.push(Number(outer.get()[0]));
      seen.push(ids);
    });
    expect(seen).toEqual([[3, 4], [1, 2, 3, 4]]);
    expect(keptStatementCount(db)).toBe(1);
    for (let i = 0; i < 60; i++) withCachedStatement(db, `SELECT ${i}`, null, (s) => s.step());
    expect(keptStatementCount(db)).toBe(48);
    freeStatements(db);
    expect(keptStatementCount(db)).toBe(0);
    db.close();
  });

  it('drops a statement whose table went away, and compiles afresh once it is back', async () => {
    const db = await ftsDb();
    const sql = 'SELECT count(*) FROM extra';
    db.exec('CREATE TABLE extra(x)');
    expect(withCachedStatement(db, sql, null, (s) => (s.step(), s.get()[0]))).toBe(0);
    db.exec('DROP TABLE extra');
    expect(() => withCachedStatement(db, sql, null, (s) => s.step())).toThrow(/no such table/);
    db.exec('CREATE TABLE extra(x); INSERT INTO extra VALUES (1)');
    expect(withCachedStatement(db, sql, null, (s) => (s.step(), s.get()[0]))).toBe(1);
    db.close();
  });
});
