import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoreModule } from '../../src/core/store/schema';
import { readSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryScalar } from '../../src/core/store/sqlite';
import { Store } from '../../src/core/store/store';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const v1: StoreModule = {
  name: 'birds',
  migrations: ['CREATE TABLE birds (name TEXT)'],
  appliers: { 'birds.seen': (db, op) => db.run('INSERT INTO birds (name) VALUES (?)', [String(op.name)]) },
};
const v2: StoreModule = { ...v1, migrations: [...(v1.migrations as string[]), 'CREATE INDEX birds_by_name ON birds(name)'] };

/** The schema version the snapshot file on disk records for the module. */
async function savedVersion(home: string): Promise<number> {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database(readSnapshot(path.join(home, 'store.sqlite')));
  try {
    return Number(queryScalar(db, "SELECT value FROM meta WHERE key = 'schema:birds'"));
  } finally {
    db.close();
  }
}

describe('a migration run on an existing snapshot', () => {
  it('is saved by the next close even with no new operation, so later opens do not run it again', async () => {
    const home = tempHome('migration-saved');
    const first = await Store.open({ home, wasmPath: WASM_PATH, modules: [v1] });
    await first.commit(() => ({ op: { op: 'birds.seen', at: 1, name: 'kestrel' }, result: undefined }));
    first.checkpoint();
    first.close();
    expect(await savedVersion(home)).toBe(1);

    // A newer build adds an index: nothing is written, but the migrated schema must reach the file.
    const upgraded = await Store.open({ home, wasmPath: WASM_PATH, modules: [v2] });
    upgraded.close();
    expect(await savedVersion(home)).toBe(2);

    const again = await Store.open({ home, wasmPath: WASM_PATH, modules: [v2] });
    expect(queryScalar(again.db, "SELECT count(*) FROM sqlite_master WHERE name = 'birds_by_name'")).toBe(1);
    expect(queryScalar(again.db, 'SELECT name FROM birds')).toBe('kestrel');
    again.close();
  });
});
