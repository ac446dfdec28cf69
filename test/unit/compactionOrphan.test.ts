import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openServices } from '../../src/core/services';
import { writeSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs } from '../../src/core/store/sqlite';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const WORKER = path.resolve(__dirname, '../../dist/compactWorker.js');

/** A process is gone once it no longer exists or is a zombie waiting for its new parent to reap it. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A snapshot whose compaction holds the child's main thread for seconds: ~48 MB of rows that do not compress. */
async function largeSnapshot(home: string): Promise<string> {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database();
  db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('journal_offset', '0'); CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT)");
  const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
  db.exec('BEGIN');
  for (let i = 0; i < 24_000; i++) insert.run([randomBytes(1500).toString('base64')]);
  db.exec('COMMIT');
  insert.free();
  const file = path.join(home, 'store.sqlite');
  writeSnapshot(file, db.export());
  db.close();
  return file;
}

describe('the compaction child and its owner', () => {
  it('exits within a second of its owner being killed -9 in the middle of a long phase, and takes its temp file with it', async () => {
    const home = tempHome('compact-orphan');
    const snapshot = await largeSnapshot(home);
    // An owner that starts a compaction exactly as Compactor.inChild does.
    const script = `const { fork } = require('node:child_process');
      const w = fork(${JSON.stringify(WORKER)}, [], { execArgv: ['--expose-gc'], serialization: 'advanced' });
      w.send({ wasmPath: ${JSON.stringify(WASM_PATH)}, snapshotFile: ${JSON.stringify(snapshot)}, out: ${JSON.stringify(snapshot)} + '.tmp-' + process.pid + '-compact' });
      w.on('spawn', () => console.log(w.pid));`;
    const owner = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const child = await new Promise<number>((resolve) => owner.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    // Past the wasm load (~0.1 s on a quiet machine): from here the job (VACUUM INTO, export, encode)
    // runs without an event-loop turn for seconds; on a quiet machine it is over within about 1.5 s.
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(child)).toBe(true);
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    const killedAt = performance.now();
    while (alive(child) && performance.now() - killedAt < 10_000) await new Promise((r) => setTimeout(r, 20));
    const ranOnMs = performance.now() - killedAt;
    console.log(`the compaction child was gone ${ranOnMs.toFixed(0)} ms after its owner was killed (machine shared)`);
    expect(alive(child)).toBe(false);
    expect(ranOnMs).toBeLessThan(1_000);
    expect(fs.readdirSync(home).filter((f) => f.includes('.tmp-'))).toEqual([]);
  }, 60_000);

  it('a temp file whose process is gone is removed when the store next opens; a live process\'s is left alone', async () => {
    const home = tempHome('stray-temps');
    const s = await openServices({ home, wasmPath: WASM_PATH, readAhead: false });
    s.store.close();
    // A pid that was just used and has ended: a real dead process, not a guess.
    const dead = await new Promise<number>((resolve) => {
      const p = spawn(process.execPath, ['-e', '0']);
      p.once('exit', () => resolve(p.pid!));
    });
    const deadTemps = [`store.sqlite.tmp-${dead}-compact`, `store.sqlite.tmp-${dead}-0a1b2c3d`, `journal.jsonl.tmp-${dead}-deadbeef`, `store.hot.json.tmp-${dead}`];
    for (const name of deadTemps) fs.writeFileSync(path.join(home, name), 'x'.repeat(100_000));
    fs.mkdirSync(path.join(home, 'journal.sealed'), { recursive: true });
    fs.writeFileSync(path.join(home, 'journal.sealed', `0000-0100.seg.tmp-${dead}-00ff00ff`), 'partial segment');
    const live = `store.sqlite.tmp-${process.ppid}-0a1b2c3d`;
    fs.writeFileSync(path.join(home, live), 'still being written');
    const again = await openServices({ home, wasmPath: WASM_PATH, readAhead: false });
    again.store.close();
    expect(fs.readdirSync(home).filter((f) => f.includes('.tmp-'))).toEqual([live]);
    expect(fs.readdirSync(path.join(home, 'journal.sealed'))).toEqual([]);
  });
});
