import { describe, expect, it } from 'vitest';
import { unrenderedPaths } from '../../src/core/memory/vault/vaultState';
import { loadSqlJs, queryRows } from '../../src/core/store/sqlite';
import { openTemp, WASM_PATH } from './helpers/tempStore';

/** Cold open (issue 2): the first search's look-up of unwritten day logs reads per-path counts kept by triggers instead of every note. */

describe('unrenderedPaths', () => {
  it('finds exactly the paths the plain DISTINCT query finds (retired notes, written files, retired files, shared prefixes), after every kind of change', async () => {
    const s = await openTemp();
    // A detached copy of a real store's schema; the synthetic rows never reach the store.
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database(s.store.db.export());
    s.store.close();
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    const paths = Array.from({ length: 60 }, (_, i) => `scope${i % 3}/2026-01-${String(1 + (i % 28)).padStart(2, '0')}${i % 5 === 0 ? '-x' : ''}.md`);
    db.exec('BEGIN');
    for (let i = 0; i < 2000; i++) {
      const p = paths[rand(paths.length)] as string;
      db.run(`INSERT INTO notes (id, path, day, text, scope, source, cites, created_at, retired_at) VALUES (?, ?, '2026-01-01', 't', 's', 'test', '[]', ?, ?)`, [`n${i}`, p, i, rand(4) === 0 ? i : null]);
    }
    // Every note of one path retired; some paths written (live or retired files).
    db.run(`UPDATE notes SET retired_at = 1 WHERE path = ?`, [paths[4] as string]);
    for (const [i, p] of paths.entries()) {
      if (i % 4 === 1) db.run(`INSERT INTO vault_files (id, path, scope, kind, size, mtime_ms, indexed_at, retired_at) VALUES (?, ?, 's', 'day', 1, 1, 1, ?)`, [`f${i}`, p, i % 8 === 1 ? 5 : null]);
    }
    db.exec('COMMIT');
    const reference = () =>
      queryRows(db, 'SELECT DISTINCT path FROM notes WHERE retired_at IS NULL AND path NOT IN (SELECT path FROM vault_files WHERE retired_at IS NULL) ORDER BY path').map((r) => String(r.path));
    expect(reference().length).toBeGreaterThan(10);
    expect(reference()).not.toContain(paths[4]);
    expect(unrenderedPaths(db)).toEqual(reference());
    // The per-path counts follow every kind of change to notes: restores, retirements, moves, deletes.
    db.run('UPDATE notes SET retired_at = NULL WHERE path = ? AND rowid % 2 = 0', [paths[4] as string]);
    expect(unrenderedPaths(db)).toContain(paths[4]);
    db.run('UPDATE notes SET retired_at = 9 WHERE path = ?', [paths[6] as string]);
    db.run('UPDATE notes SET path = ? WHERE path = ?', ['scope9/moved.md', paths[7] as string]);
    db.run('UPDATE notes SET path = ?, retired_at = NULL WHERE rowid % 7 = 0', [paths[8] as string]);
    db.run('DELETE FROM notes WHERE path = ? OR rowid % 11 = 0', [paths[9] as string]);
    db.run("UPDATE notes SET text = 'edited' WHERE rowid % 3 = 0");
    expect(unrenderedPaths(db)).toEqual(reference());
    expect(unrenderedPaths(db)).toContain('scope9/moved.md');
    expect(unrenderedPaths(db)).not.toContain(paths[6]);
    const counts = queryRows(db, 'SELECT path, live FROM note_paths WHERE live != 0 ORDER BY path');
    const truth = queryRows(db, 'SELECT path, count(*) AS live FROM notes WHERE retired_at IS NULL GROUP BY path ORDER BY path');
    expect(counts).toEqual(truth);
    // The look-up reads the counts alone, never notes or their index: a snapshot read on demand
    // would otherwise load a chunk of the file per few day logs.
    const plan = queryRows(db, `EXPLAIN QUERY PLAN SELECT path FROM note_paths WHERE live > 0 AND path NOT IN (SELECT path FROM vault_files WHERE retired_at IS NULL) ORDER BY path`).map((r) => String(r.detail));
    expect(plan.join('\n')).not.toMatch(/notes/);
    db.exec('DELETE FROM notes');
    expect(unrenderedPaths(db)).toEqual([]);
    db.close();
  });
});
