import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openServices, type Services } from '../../src/core/services';
import { compactionPeakBytes, Compactor } from '../../src/core/store/compaction';
import { FileLock } from '../../src/core/store/fileLock';
import { readSnapshot, writeSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryRows, type Database } from '../../src/core/store/sqlite';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const WORKER = path.resolve(__dirname, '../../dist/compactWorker.js');
const MB = 1024 * 1024;
/** The chunk cache the child shares between the source and the copy: the database below is several times its size. */
const CACHE = 16 * MB;
/** The process budget the child must stay under with that cache (compactionPeakBytes says what it needs). */
const BUDGET = 200 * MB;

const open: Services[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.store.close();
});

/**
 * A database of ~100 MB whose tables are interleaved page by page, as an import leaves them:
 * rows go in batches into a table with an INTEGER PRIMARY KEY and an index, an FTS4 table, a
 * rowid table with neither (its rowids must survive with gaps) and an AUTOINCREMENT one, with
 * deletions between, and a trigger and a view that own no b-tree.
 */
async function bigDatabase(journalOffset: number): Promise<Database> {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database();
  db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('journal_offset', '${journalOffset}');
    CREATE TABLE ev (id INTEGER PRIMARY KEY, session TEXT NOT NULL, body TEXT NOT NULL);
    CREATE INDEX ev_session ON ev(session);
    CREATE TABLE bare (a TEXT, b BLOB);
    CREATE TABLE counted (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);
    CREATE TABLE audit (n INTEGER);
    CREATE VIRTUAL TABLE docs USING fts4(body);
    CREATE VIEW recent AS SELECT id, session FROM ev WHERE id > 100;
    PRAGMA user_version = 7;`);
  for (let batch = 0; batch < 48; batch++) {
    const lo = batch * 1000 + 1;
    const hi = lo + 999;
    const n = `WITH RECURSIVE n(i) AS (SELECT ${lo} UNION ALL SELECT i + 1 FROM n WHERE i < ${hi})`;
    db.exec(`BEGIN;
      ${n} INSERT INTO ev SELECT i, 's' || (i % 97), 'event ' || i || ' ' || hex(randomblob(500)) || ' ' || hex(zeroblob(200)) FROM n;
      ${n} INSERT INTO docs(docid, body) SELECT i, 'w' || (i % 5000) || ' w' || (i * 7 % 977) || ' common words here ' || 'v' || (i % 13) || ' t' || (i * 31 % 20011) || ' alpha beta' FROM n;
      ${n} INSERT INTO bare SELECT 'b' || i, randomblob(300) FROM n;
      ${n} INSERT INTO counted(v) SELECT 'c' || i FROM n;
      COMMIT;`);
  }
  db.exec(`DELETE FROM bare WHERE rowid % 10 = 0; DELETE FROM docs WHERE docid % 17 = 0; DELETE FROM counted WHERE id > 47990;
    CREATE TRIGGER counted_audit AFTER INSERT ON counted BEGIN INSERT INTO audit VALUES (new.id); END;`);
  return db;
}

/** Per table, a hash of every row with its rowid in rowid order (FTS4's segment tables are the layout optimize changes). */
function tableHashes(db: Database): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of queryRows(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    const name = String(r.name);
    if (/_(segments|segdir)$/.test(name)) continue;
    const hash = createHash('sha256');
    const stmt = db.prepare(`SELECT rowid AS _rowid_, * FROM "${name}" ORDER BY rowid`);
    let rows = 0;
    while (stmt.step()) {
      hash.update(JSON.stringify(stmt.get(), (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)));
      rows++;
    }
    stmt.free();
    out[name] = `${rows}:${hash.digest('hex')}`;
  }
  return out;
}

/** FTS4 answers with what BM25 reads (matchinfo: documents, average lengths, per-term hits), for a few queries. */
function searches(db: Database): unknown[] {
  return ['w12', 'common', 'alpha w7', 'v3 beta', 'w12 OR w13', 'here -v5 w977'].map((q) => db.exec(`SELECT docid, hex(matchinfo(docs, 'pcnalx')) FROM docs WHERE docs MATCH '${q}' ORDER BY docid`)[0]?.values ?? []);
}

function schemaOf(db: Database): unknown[] {
  return db.exec("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name")[0]?.values ?? [];
}

function compactor(home: string): Compactor {
  return new Compactor({
    home,
    snapshotFile: path.join(home, 'store.sqlite'),
    wasmPath: WASM_PATH,
    workerPath: WORKER,
    cacheBytes: CACHE,
    lock: new FileLock(path.join(home, 'journal.lock')),
    now: () => Date.now(),
    swapped: () => undefined,
  });
}

const temps = (home: string) => fs.readdirSync(home).filter((f) => f.includes('.tmp-'));

describe('compaction under a memory budget (paged source and copy, written chunk by chunk)', () => {
  it(`compacts a database six times its chunk cache in a child that stays under ${BUDGET / MB} MB, keeping every row, rowid and search answer`, async () => {
    const db = await bigDatabase(4242);
    const bytes = db.export().byteLength;
    expect(bytes).toBeGreaterThan(6 * CACHE);
    const hashes = tableHashes(db);
    const found = searches(db);
    const schema = schemaOf(db);
    expect(found.every((rows) => (rows as unknown[]).length > 0)).toBe(true);
    expect(db.exec('SELECT count(*) FROM docs_segdir')[0]?.values[0]?.[0]).toBeGreaterThan(1);
    const home = tempHome('compact-budget');
    writeSnapshot(path.join(home, 'store.sqlite'), db.export());
    db.close();
    // What Store.compact checks before it starts one: the child's need, independent of the database's size.
    expect(compactionPeakBytes(CACHE)).toBeLessThanOrEqual(BUDGET);

    const result = await compactor(home).compact();
    expect(result).toMatchObject({ ok: true, coveredOffset: 4242, databaseBytesBefore: bytes });
    if (!result.ok) return;
    // Before, the child held the vacuumed database in sql.js's memory file and then its export: 388 MB here.
    expect(result.childMaxRss, `the child's peak, ${Math.round(result.childMaxRss / MB)} MB`).toBeLessThan(BUDGET);
    expect(temps(home)).toEqual([]);

    const SQL = await loadSqlJs(WASM_PATH);
    const after = new SQL.Database(readSnapshot(path.join(home, 'store.sqlite')));
    try {
      expect(after.exec('PRAGMA integrity_check')[0]?.values).toEqual([['ok']]);
      expect(after.exec('SELECT count(*) FROM docs_segdir')[0]?.values).toEqual([[1]]);
      expect(after.exec('PRAGMA user_version')[0]?.values).toEqual([[7]]);
      expect(schemaOf(after)).toEqual(schema);
      expect(tableHashes(after)).toEqual(hashes);
      expect(searches(after)).toEqual(found);
      // The trigger came across and fires; the AUTOINCREMENT counter is the source's, not the highest rowid left.
      after.exec("INSERT INTO counted(v) VALUES ('new')");
      expect(after.exec('SELECT n FROM audit')[0]?.values).toEqual([[48001]]);
    } finally {
      after.close();
    }
  }, 240_000);

  it('loses nothing when the compaction child is killed -9 midway: the old snapshot stays, and its temp and spill files are removed by its owner, or by the next open when the owner died too', async () => {
    const db = await bigDatabase(0);
    const home = tempHome('compact-budget-kill');
    const snapshot = path.join(home, 'store.sqlite');
    writeSnapshot(snapshot, db.export());
    db.close();
    const hash = createHash('sha256').update(fs.readFileSync(snapshot)).digest('hex');
    const sameSnapshot = () => createHash('sha256').update(fs.readFileSync(snapshot)).digest('hex') === hash;
    /** The pid of the compaction child once it has spilled chunks (its spill files carry its pid): midway through its work. */
    const spilling = async (owner: number): Promise<number> => {
      for (let i = 0; i < 2400; i++) {
        const spill = temps(home).find((f) => !f.endsWith('-compact') && !f.includes(`.tmp-${owner}-`));
        if (spill) return Number(/\.tmp-(\d+)-/.exec(spill)?.[1]);
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('the compaction child never spilled a chunk');
    };

    // The owner lives on: its compaction fails, and it removes what the dead child left.
    const running = compactor(home).compact();
    process.kill(await spilling(process.pid), 'SIGKILL');
    expect(await running).toMatchObject({ ok: false, reason: expect.stringContaining('exited (SIGKILL)') });
    expect(sameSnapshot()).toBe(true);
    expect(temps(home)).toEqual([]);

    // The owner and its child both killed -9 midway: nothing is cleaned up until the store next opens.
    const script = `const { fork } = require('node:child_process');
      const w = fork(${JSON.stringify(WORKER)}, [], { execArgv: ['--expose-gc'], serialization: 'advanced' });
      w.send({ wasmPath: ${JSON.stringify(WASM_PATH)}, snapshotFile: ${JSON.stringify(snapshot)}, out: ${JSON.stringify(snapshot)} + '.tmp-' + process.pid + '-compact', cacheBytes: ${CACHE} });
      setInterval(() => undefined, 1000);`;
    const owner = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const child = await spilling(owner.pid as number);
    process.kill(child, 'SIGKILL');
    // Reaped by its owner before that is killed too (an orphan's exit may go unreaped in a container, and a zombie's pid counts as alive).
    for (let i = 0; i < 400 && fs.existsSync(`/proc/${child}`); i++) await new Promise((r) => setTimeout(r, 25));
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    expect(sameSnapshot()).toBe(true);
    expect(temps(home).some((f) => f.includes(`.tmp-${child}-`)), 'the dead child left its spill files').toBe(true);
    const s = await openServices({ home, wasmPath: WASM_PATH, compactWorkerPath: WORKER, readAhead: false, autoCompact: false });
    open.push(s);
    expect(temps(home)).toEqual([]);
  }, 240_000);
});
