import { createRequire } from 'node:module';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'rolldown';
import { afterEach, describe, expect, it } from 'vitest';
import { openServices, type Services } from '../../src/core/services';
import { swapIn } from '../../src/core/store/compaction';
import { compactSnapshot } from '../../src/core/store/compactionJob';
import { FileLock } from '../../src/core/store/fileLock';
import { writeSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryRows, queryScalar, type Database } from '../../src/core/store/sqlite';
import { searchFts } from '../../src/core/search/ftsSearch';
import { transcriptFixtures } from './helpers/fixtures';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { callTool } from './helpers/memoryCall';
import { tempHome, WASM_PATH } from './helpers/tempStore';
import { SMALL_DAG } from './lcm/lcmFixture';

const ROOT = path.resolve(__dirname, '../..');
const WORKER = path.join(ROOT, 'dist/compactWorker.js');
const CLI = path.join(ROOT, 'dist/cli.js');
const NOW = Date.parse('2026-06-01T12:00:00Z');

const open: Services[] = [];
async function openStore(home: string, extra: { autoCompact?: boolean; compactMinBytes?: number; checkpointBytes?: number; checkpointIdleMs?: number } = {}): Promise<Services> {
  const s = await openServices({ home, wasmPath: WASM_PATH, compactWorkerPath: WORKER, readAhead: false, ...extra }, { lcm: SMALL_DAG });
  open.push(s);
  return s;
}

afterEach(() => {
  for (const s of open.splice(0)) s.store.close();
});

/** FTS4's segment tables hold the index's layout, which optimize changes by design; everything else must not change. */
const LAYOUT = /_(segments|segdir)$/;

/** Every table's rows with their rowids (virtual tables by docid), in rowid order. */
function dump(db: Database): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const r of queryRows(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    const name = String(r.name);
    if (LAYOUT.test(name)) continue;
    out[name] = db.exec(`SELECT rowid AS _rowid_, * FROM "${name}" ORDER BY rowid`)[0]?.values ?? [];
  }
  return out;
}

function ftsTables(db: Database): string[] {
  return queryRows(db, "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%fts4%' ORDER BY name").map((r) => String(r.name));
}

/** The same searches over every FTS table, every sort: what the one scorer answers. */
function searches(db: Database): unknown[] {
  const out: unknown[] = [];
  for (const table of ftsTables(db)) {
    for (const query of ['the', 'error test', 'session', 'vite config', 'npm']) {
      for (const sort of ['relevance', 'recency', 'hybrid'] as const) out.push([table, query, sort, searchFts(db, table, { query, limit: 50, sort, now: NOW })]);
    }
  }
  return out;
}

/** A store with rows in every aggregate: imported history, the lcm DAG, chapters, memory, errors, rules, requests. */
async function populate(s: Services): Promise<void> {
  await s.importer.importPaths([transcriptFixtures()]);
  await s.lcm.buildAll();
  for (const r of queryRows(s.store.db, "SELECT id FROM sessions WHERE source != 'recollect' ORDER BY id LIMIT 2")) {
    await s.chapters.door({ sessionId: String(r.id), intent: 'continue', client: 'test' });
  }
  await callTool(s, 'remember_note', { text: 'The vite config lives in vite.config.mts' });
  const gone = await callTool(s, 'remember_note', { text: 'A note about npm that is retired, leaving a rowid gap' });
  await callTool(s, 'remember_note', { text: 'Another note after the gap' });
  await callTool(s, 'retire_memory', { id: gone.id });
  await callTool(s, 'save_memory', { subject: 'build tool', predicate: 'is', object: 'Vite 8' });
  await callTool(s, 'save_memory', { subject: 'build tool', predicate: 'is', object: 'Vite 9' });
  await callTool(s, 'write_error', { tool_name: 'npm', keywords: ['eresolve'], symptom: 'npm install fails with ERESOLVE error', action: 'pin react to 18', outcome: 'resolved' });
  const rule = await invokeTool(findTool('chapters_rule_propose')!, { text: 'Run npm test before every commit.', category: 'testing', rationale: 'a broken main' }, s, { client: 'claude-code', workspace: '/work/demo' });
  expect(rule).toMatchObject({ ok: true });
  await callTool(s, 'whats_new', {}, 'beta');
  await callTool(s, 'ask_agent', { to: 'beta', request: 'Which port does the dev server use?' }, 'alpha');
}

function tableCounts(d: Record<string, unknown[]>): Record<string, number> {
  return Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.length]));
}

/** This process's children running the compaction bundle (Linux /proc, where these tests run). */
function compactionChildren(): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(fs.readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      if (ppid === process.pid && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('compactWorker.js')) found.push(Number(entry));
    } catch {
      // a process that ended while we looked
    }
  }
  return found;
}

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('snapshot compaction (FTS optimize + VACUUM INTO in a child process)', () => {
  it('keeps every rowid of plain sql.js tables, with and without an INTEGER PRIMARY KEY, across deletions', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('journal_offset', '42');
      CREATE TABLE keyed (id TEXT PRIMARY KEY, v TEXT); CREATE TABLE bare (a TEXT, b INT); CREATE INDEX bare_a ON bare(a);
      CREATE TABLE ipk (id INTEGER PRIMARY KEY, v TEXT);`);
    db.exec('BEGIN');
    for (let i = 0; i < 3000; i++) {
      db.run('INSERT INTO keyed VALUES (?, ?)', [`k${(i * 7919) % 3000}`, 'x'.repeat(i % 200)]);
      db.run('INSERT INTO bare VALUES (?, ?)', [`b${i}`, i]);
      db.run('INSERT INTO ipk(v) VALUES (?)', [`v${i}`]);
    }
    db.exec('COMMIT');
    db.exec('DELETE FROM keyed WHERE rowid % 3 = 0; DELETE FROM bare WHERE rowid % 5 = 0; DELETE FROM ipk WHERE id > 2990 OR id % 7 = 0');
    const before = dump(db);
    const home = tempHome('compact-raw');
    const file = path.join(home, 'store.sqlite');
    writeSnapshot(file, db.export());
    db.close();
    const result = await compactSnapshot(SQL, file, `${file}.out`);
    expect(result.coveredOffset).toBe(42);
    fs.renameSync(`${file}.out`, file);
    const { readSnapshot } = await import('../../src/core/store/snapshot');
    const after = new SQL.Database(readSnapshot(file));
    expect(dump(after)).toEqual(before);
    expect(tableCounts(before)).toMatchObject({ keyed: 2000, bare: 2400 });
    after.close();
  });

  it('rewrites a store with every aggregate populated: same rows and rowids, same searches, integrity ok, and replay on top equals a store never compacted', async () => {
    const home = tempHome('compact');
    const a = await openStore(home, { autoCompact: false });
    await populate(a);
    a.store.checkpoint();
    const before = dump(a.store.db);
    const found = searches(a.store.db);
    // Rows in every aggregate, so the comparison below covers them all.
    for (const t of ['sessions', 'events', 'lcm_summaries', 'chapters', 'notes', 'facts', 'errors', 'rules', 'agent_requests', 'history_fts', 'lcm_summary_fts', 'chapters_fts', 'errors_fts', 'rules_fts']) {
      expect(before[t]?.length, t).toBeGreaterThan(0);
    }
    expect(queryScalar(a.store.db, 'SELECT count(*) FROM history_fts_segdir')).toBeGreaterThan(1);
    // The never-compacted twin: same snapshot, same journal.
    const twin = tempHome('compact-twin');
    fs.cpSync(home, twin, { recursive: true });

    const result = await a.store.compact();
    expect(result).toMatchObject({ ok: true });
    if (!result.ok) return;
    expect(result.ftsTables).toContain('history_fts');
    expect(fs.readdirSync(home).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // The process that compacted reads from the new file and sees the same state.
    expect(dump(a.store.db)).toEqual(before);
    expect(searches(a.store.db)).toEqual(found);
    expect(queryScalar(a.store.db, 'PRAGMA integrity_check')).toBe('ok');
    expect(queryScalar(a.store.db, 'SELECT count(*) FROM history_fts_segdir')).toBe(1);

    // A fresh open of the compacted file: the same again.
    const b = await openStore(home);
    expect(dump(b.store.db)).toEqual(before);
    expect(searches(b.store.db)).toEqual(found);
    expect(queryScalar(b.store.db, 'PRAGMA integrity_check')).toBe('ok');
    b.store.close();
    open.splice(open.indexOf(b), 1);

    // Another process writes on top of the compacted snapshot (new rows in FTS tables included).
    const env = { ...process.env, RECOLLECT_HOME: home };
    execFileSync(process.execPath, [CLI, 'tool', 'remember_note', JSON.stringify({ text: 'Written by another process after compaction, vite again' })], { env });
    execFileSync(process.execPath, [CLI, 'tool', 'write_error', JSON.stringify({ tool_name: 'tsc', keywords: ['ts2322'], symptom: 'type error after compaction', action: 'narrow the type', outcome: 'resolved' })], { env });
    await callTool(a, 'remember_note', { text: 'And one from the compacting process itself' });
    a.store.checkpoint();

    // The twin gets the same journal and replays it on its uncompacted snapshot.
    fs.copyFileSync(path.join(home, 'journal.jsonl'), path.join(twin, 'journal.jsonl'));
    const t = await openStore(twin, { autoCompact: false });
    const c = await openStore(home);
    const expected = dump(t.store.db);
    expect(expected.notes?.length).toBe((before.notes?.length ?? 0) + 2);
    expect(dump(a.store.db)).toEqual(expected);
    expect(dump(c.store.db)).toEqual(expected);
    expect(searches(c.store.db)).toEqual(searches(t.store.db));
    expect(searches(a.store.db)).toEqual(searches(t.store.db));
  });

  it('discards its copy when another checkpoint replaced the snapshot meanwhile', async () => {
    const home = tempHome('compact-race');
    const a = await openStore(home, { autoCompact: false });
    await populate(a);
    a.store.checkpoint();
    const snapshot = path.join(home, 'store.sqlite');
    const file = await compactSnapshot(await loadSqlJs(WASM_PATH), snapshot, `${snapshot}.tmp-${process.pid}-compact`);
    // Between the worker's read and the swap, another process checkpoints.
    const b = await openStore(home, { autoCompact: false });
    await callTool(b, 'remember_note', { text: 'written while the compaction runs' });
    b.store.checkpoint();
    const written = sha(snapshot);
    let reopened = false;
    const result = await swapIn({ lock: new FileLock(path.join(home, 'journal.lock')), snapshotFile: snapshot, home, now: () => NOW, swapped: () => void (reopened = true) }, file);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining('replaced the snapshot') });
    expect(reopened).toBe(false);
    expect(sha(snapshot)).toBe(written);
    expect(fs.readdirSync(home).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(dump(a.store.db)).toEqual(dump(b.store.db));
  });

  it('loses nothing when the compacting process is killed -9: the old snapshot stays, and the next compaction removes the dead temp file', async () => {
    const home = tempHome('compact-kill');
    const a = await openStore(home, { autoCompact: false });
    await populate(a);
    a.store.checkpoint();
    const before = dump(a.store.db);
    const snapshot = path.join(home, 'store.sqlite');
    const hash = sha(snapshot);
    // A process that compacts exactly as Store.compact does, killed once its compaction child has started.
    const script = `const { fork } = require('node:child_process');
      const w = fork(${JSON.stringify(WORKER)}, [], { execArgv: ['--expose-gc'], serialization: 'advanced' });
      w.send({ wasmPath: ${JSON.stringify(WASM_PATH)}, snapshotFile: ${JSON.stringify(snapshot)}, out: ${JSON.stringify(snapshot)} + '.tmp-' + process.pid + '-compact' });
      w.on('spawn', () => console.log(w.pid));`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const orphan = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The compaction child outlives its owner only until it notices (at most the rest of its job), and takes its temp file with it.
    for (let i = 0; i < 600 && alive(orphan); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(orphan)).toBe(false);
    expect(sha(snapshot)).toBe(hash);
    // Had the kill come after the temp file was written, it would be here, half the size of a store.
    const deadTemp = `${snapshot}.tmp-${child.pid}-compact`;
    if (!fs.existsSync(deadTemp)) fs.writeFileSync(deadTemp, 'a partial file');
    const b = await openStore(home);
    expect(dump(b.store.db)).toEqual(before);
    const result = await a.store.compact();
    expect(result.ok).toBe(true);
    expect(fs.readdirSync(home).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(dump(a.store.db)).toEqual(before);
  });

  it('close() during a compaction kills its child process, removes its temp file and leaves the snapshot byte-identical', async () => {
    const home = tempHome('compact-close');
    const a = await openStore(home, { autoCompact: false });
    await populate(a);
    a.store.checkpoint();
    const snapshot = path.join(home, 'store.sqlite');
    const hash = sha(snapshot);
    const running = a.store.compact();
    // The child is forked before compact() first yields, so it is there now, still starting.
    const [pid, ...others] = compactionChildren();
    expect(pid, 'the compaction child process').toBeDefined();
    expect(others).toEqual([]);
    a.store.close();
    open.splice(open.indexOf(a), 1);
    const result = await running;
    // Killed before it answered: a child left to finish would answer, and its copy be discarded at the swap instead.
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining('stopped because the store closed') });
    expect(() => process.kill(pid!, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(sha(snapshot)).toBe(hash);
    expect(fs.readdirSync(home).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('an awaited compact() keeps its process alive until it answers, in a process with nothing else to do', async () => {
    const home = tempHome('compact-awaited');
    const a = await openStore(home, { autoCompact: false });
    await populate(a);
    a.store.close();
    open.splice(open.indexOf(a), 1);
    const script = path.join(tempHome('compact-child'), 'compactChild.cjs');
    await build({ input: path.join(__dirname, 'helpers/compactChild.ts'), platform: 'node', logLevel: 'warn', output: { file: script, format: 'cjs' } });
    // The bundle loads RE2's wasm from its own folder, as dist/ has it (scripts/build.mjs).
    fs.copyFileSync(createRequire(__filename).resolve('re2-wasm/build/wasm/re2.wasm'), path.join(path.dirname(script), 're2.wasm'));
    // Before the fix the child and its channel were unref'd for every call: this process then exited with status 0 and printed nothing.
    const out = execFileSync(process.execPath, [script, home, WASM_PATH, WORKER], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ ok: true });
    expect(fs.existsSync(path.join(home, 'store.compaction.json'))).toBe(true);
  });

  it('runs by itself after an idle checkpoint once the database has grown past the threshold, and records it beside the snapshot', async () => {
    const home = tempHome('compact-auto');
    const a = await openStore(home, { compactMinBytes: 0, checkpointBytes: 1, checkpointIdleMs: 10 });
    await populate(a);
    const record = path.join(home, 'store.compaction.json');
    // Up to 90 s: with the whole suite running on two cores the child once took more than 30.
    for (let i = 0; i < 1_800 && !fs.existsSync(record); i++) await new Promise((r) => setTimeout(r, 50));
    const written = JSON.parse(fs.readFileSync(record, 'utf8')) as { databaseBytes: number; coveredOffset: number };
    expect(written.coveredOffset).toBeGreaterThan(0);
    const b = await openStore(home, { autoCompact: false });
    expect(dump(b.store.db)).toEqual(dump(a.store.db));
    expect(queryScalar(b.store.db, 'PRAGMA integrity_check')).toBe('ok');
  });
});

/** Running, not a zombie (an orphan's exit may go unreaped in a container). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
