import { describe, expect, it } from 'vitest';
import { chunkRefs } from '../../src/core/memory/recall/chunkRefs';
import { loadSqlJs, queryRows } from '../../src/core/store/sqlite';
import { openTemp, WASM_PATH } from './helpers/tempStore';

describe('chunkRefs', () => {
  it('answers for memory-index docids only: a history note chunk with the same docid (its own index) is left out', async () => {
    const s = await openTemp();
    // A detached copy of a real store's schema; the rows never reach the store.
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database(s.store.db.export());
    s.store.close();
    const file = (id: string, path: string, kind: string) =>
      db.run(`INSERT INTO vault_files (id, path, scope, kind, size, mtime_ms, indexed_at) VALUES (?, ?, 'global', ?, 1, 1, 1)`, [id, path, kind]);
    file('mem', 'notes/kestrels.md', 'note');
    file('hist', 'history/2026-01-01.md', 'history');
    const chunk = (fileId: string, seq: number, line: number, docid: number) =>
      db.run('INSERT INTO note_chunks (file_id, seq, text, line, fts_docid) VALUES (?, ?, ?, ?, ?)', [fileId, seq, 't', line, docid]);
    chunk('mem', 0, 1, 7);
    chunk('mem', 1, 12, 8);
    chunk('hist', 0, 3, 8); // docid 8 of the history notes' own index
    chunk('hist', 1, 9, 9);
    expect([...chunkRefs(db, [7, 8, 9, 10]).entries()]).toEqual([
      [7, { fileId: 'mem', seq: 0, line: 1 }],
      [8, { fileId: 'mem', seq: 1, line: 12 }],
    ]);
    const plan = queryRows(db, 'EXPLAIN QUERY PLAN SELECT file_id FROM note_chunks WHERE fts_docid IN (1, 2)').map((r) => String(r.detail));
    expect(plan.join('\n')).toMatch(/note_chunks_by_docid/);
    db.close();
  });
});
