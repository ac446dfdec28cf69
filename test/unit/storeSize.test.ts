import * as fs from 'node:fs';
import * as path from 'node:path';
import { brotliCompressSync, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeLine, parseOperation, type Operation } from '../../src/core/store/journal';
import { openServices } from '../../src/core/services';
import { walkTranscriptFiles } from '../../src/core/history/importer';
import { readSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryRows } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

/** Store size work (issue 3): compressed snapshot and journal lines, one journal line per imported file. */

const journalOf = (home: string) => fs.readFileSync(path.join(home, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);

/** Everything an import leaves in the history tables, in a stable order. */
function historyPicture(db: Parameters<typeof queryRows>[0]) {
  return {
    sessions: queryRows(db, 'SELECT * FROM sessions ORDER BY id'),
    runs: queryRows(db, 'SELECT * FROM runs ORDER BY id'),
    events: queryRows(db, 'SELECT session_id, key, run_id, seq, kind, text, blob, hash, created_at, tool_name FROM events ORDER BY session_id, seq'),
    files: queryRows(db, 'SELECT path, size, mtime_ms FROM import_files ORDER BY path'),
    indexed: queryRows(db, "SELECT count(*) AS n FROM history_fts WHERE history_fts MATCH 'the'"),
  };
}

describe('journal lines', () => {
  it('an operation of any size is one line of its plain JSON, and reads back identical', () => {
    const op: Operation = { op: 'test.big', at: 1700000000000, text: 'lorem ipsum dolor '.repeat(400), list: [1, null, 'é'] };
    expect(encodeLine(op)).toBe(JSON.stringify(op));
    expect(parseOperation(encodeLine(op))).toEqual(op);
  });

  it('a line an earlier build packed (brotli or deflated, base64) is refused with its reason, whether it would unpack or not', () => {
    const op = { op: 'test.big', at: 1, pad: 'y'.repeat(5000) };
    const json = Buffer.from(JSON.stringify(op));
    expect(parseOperation(JSON.stringify({ op: 'test.big', at: 1, brotli: brotliCompressSync(json).toString('base64') }))).toBe(
      'operation "test.big" is packed (brotli), a line encoding of earlier builds that this build does not read',
    );
    expect(parseOperation(JSON.stringify({ op: 'test.big', at: 1, deflated: deflateRawSync(json).toString('base64') }))).toBe(
      'operation "test.big" is packed (deflated), a line encoding of earlier builds that this build does not read',
    );
    expect(parseOperation('{"op":"a","at":1,"brotli":"!!!not brotli"}')).toMatch(/is packed \(brotli\)/);
    expect(parseOperation('{"op":"a","at":1')).toBe('unparseable line (16 chars)');
  });
});

describe('history import journal', () => {
  it('writes each imported file once, in batches of files per line, and replay (another process, a rebuild) gives exactly what the writer applied', async () => {
    const home = tempHome('onefile');
    const a = await openTemp(home);
    const report = await a.importer.importPaths([transcriptFixtures()]);
    expect(report.files).toBeGreaterThan(5);
    const lines = journalOf(home).map((l) => JSON.parse(l) as { op: string; brotli?: string });
    const ops = journalOf(home).map((l) => parseOperation(l) as Operation & { file?: { path: string }; files?: { file: { path: string } }[] });
    const imported = ops.flatMap((o) => (o.op === 'history.file.imported' && o.file ? [o.file.path] : o.op === 'history.files.imported' ? (o.files ?? []).map((f) => f.file.path) : []));
    expect(imported).toHaveLength(report.files - report.unchanged_files);
    expect(new Set(imported).size).toBe(imported.length);
    // Fewer lines than files: the fixtures fit in a batch or two.
    expect(ops.filter((o) => o.op === 'history.files.imported').length).toBeGreaterThan(0);
    expect(ops.filter((o) => o.op.startsWith('history.file')).length).toBeLessThan(imported.length);
    // One line encoding on every platform: plain JSON, however large.
    expect(lines.some((l) => typeof l.brotli === 'string')).toBe(false);
    const written = historyPicture(a.store.db);
    expect(written.events.length).toBe(report.events);

    const b = await openTemp(home); // replays the journal from the start: no snapshot yet
    expect(historyPicture(b.store.db)).toEqual(written);
    await a.store.rebuild();
    expect(historyPicture(a.store.db)).toEqual(written);
    a.store.close();
    b.store.close();
  });

  it('large lines an earlier build packed are skipped and counted like torn lines, checkpoints go on, and importing again brings those files back', async () => {
    const home = tempHome('packedlines');
    const a = await openTemp(home);
    // One file per call, so each is its own line (a call batches its files into fewer lines).
    const files = [...walkTranscriptFiles(transcriptFixtures())];
    for (const file of files) await a.importer.importPaths([file]);
    const written = historyPicture(a.store.db);
    a.store.close();
    // Every other import line as earlier builds wrote large lines: packed with brotli, or deflated.
    let n = 0;
    const mixed = journalOf(home).map((line) => {
      const op = parseOperation(line) as Operation;
      if (!op.op.startsWith('history.file')) return line;
      const json = Buffer.from(JSON.stringify(op), 'utf8');
      const form = n++ % 4;
      if (form === 0) return JSON.stringify({ op: op.op, at: op.at, deflated: deflateRawSync(json, { level: 1 }).toString('base64') });
      if (form === 2) return JSON.stringify({ op: op.op, at: op.at, brotli: brotliCompressSync(json).toString('base64') });
      return line;
    });
    const packed = mixed.filter((l) => l.includes('"brotli":"') || l.includes('"deflated":"')).length;
    expect(packed).toBeGreaterThan(2);
    const other = tempHome('packedlines-replay');
    fs.writeFileSync(path.join(other, 'journal.jsonl'), mixed.join('\n') + '\n');
    const b = await openTemp(other);
    expect(b.store.journalProblems).toBe(packed);
    expect(b.store.warnings.filter((w) => /journal line at byte \d+ skipped: operation "history\.files?\.imported" is packed \((brotli|deflated)\), a line encoding of earlier builds that this build does not read/.test(w))).toHaveLength(packed);
    expect(historyPicture(b.store.db)).not.toEqual(written);
    // Each skipped line held its files' "seen" record too, so the next import reads exactly those again.
    for (const file of files) await b.importer.importPaths([file]);
    // The same rows again; only the runs' ids differ, since an id is chosen when a run is imported.
    const withoutRunIds = (p: ReturnType<typeof historyPicture>) => ({ ...p, runs: p.runs.map((r) => ({ ...r, id: null })) });
    const reimported = historyPicture(b.store.db);
    for (const k of ["sessions","runs","events","files","indexed"] as const) expect(withoutRunIds(reimported)[k], k).toEqual(withoutRunIds(written)[k]);
    // A skipped old line is not a newer build's: this process still writes checkpoints.
    b.store.checkpoint();
    b.store.close();
    expect(fs.existsSync(path.join(other, 'store.sqlite'))).toBe(true);
    const c = await openTemp(other);
    expect(c.store.warnings).toEqual([]);
    expect(historyPicture(c.store.db)).toEqual(reimported);
    c.store.close();
  });
  it('skips the per-session and per-file import lines only earlier builds wrote, with the reason, and goes on checkpointing', async () => {
    const home = tempHome('oldops');
    const at = Date.parse('2026-01-05T10:00:00Z');
    const session = {
      id: 'ses_0123456789abcdef', source: 'claude-code', externalId: 'old-session', file: '/old/session.jsonl', title: 'old build',
      workspace: null, model: null, startedAt: at + 1, updatedAt: at + 2, parentId: null,
    };
    const lines = [
      { op: 'history.session.imported', at, session, upserts: [], removedKeys: [], runIds: {} },
      { op: 'history.file.seen', at, path: '/old/session.jsonl', size: 123, mtimeMs: at },
    ];
    fs.writeFileSync(path.join(home, 'journal.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const s = await openTemp(home);
    expect(s.store.journalProblems).toBe(2);
    expect(s.store.warnings.filter((w) => /operation "history\.(session\.imported|file\.seen)" is one only earlier builds wrote/.test(w))).toHaveLength(2);
    expect(queryRows(s.store.db, 'SELECT count(*) AS n FROM sessions')).toEqual([{ n: 0 }]);
    expect(queryRows(s.store.db, 'SELECT count(*) AS n FROM import_files')).toEqual([{ n: 0 }]);
    s.store.checkpoint();
    s.store.close();
    expect(fs.existsSync(path.join(home, 'store.sqlite'))).toBe(true);
  });
});

/** The database inside a snapshot this build wrote (chunked brotli frame read on demand, version 3). */
function databaseOf(snapshot: Buffer): Buffer {
  expect(snapshot.toString('latin1', 0, 8)).toBe('RCLSNAP\x03');
  const file = path.join(tempHome('frame'), 'store.sqlite');
  fs.writeFileSync(file, snapshot);
  const database = readSnapshot(file);
  if (!database) throw new Error('no database');
  return Buffer.from(database);
}

describe('snapshot at rest', () => {
  it('is written compressed (brotli, framed with size and hash) and opens to the same state', async () => {
    const home = tempHome('brsnap');
    const a = await openTemp(home);
    await a.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
    await a.memory.remember({ statement: 'the snapshot is compressed at rest' }, 'test');
    const before = historyPicture(a.store.db);
    a.store.checkpoint();
    a.store.close();
    const file = fs.readFileSync(path.join(home, 'store.sqlite'));
    const database = databaseOf(file);
    expect(database.toString('latin1', 0, 15)).toBe('SQLite format 3');
    expect(Number(file.readBigUInt64LE(8))).toBe(database.length);
    expect(file.length).toBeLessThan(database.length / 2);

    const b = await openTemp(home);
    expect(historyPicture(b.store.db)).toEqual(before);
    expect(b.memory.status().entries).toBe(1);
    b.store.close();
  });

  it('a compressed snapshot with a flipped byte or cut short is caught (its hash), kept aside and rebuilt from the journal', async () => {
    const home = tempHome('crcsnap');
    const a = await openTemp(home);
    for (let i = 0; i < 10; i++) await a.memory.remember({ statement: `crc note ${i}` }, 'test');
    a.store.checkpoint();
    a.store.close();
    const snapshot = path.join(home, 'store.sqlite');
    const good = fs.readFileSync(snapshot);
    const flipped = Buffer.from(good);
    const at = 48 + Math.floor((good.length - 48) / 2);
    flipped[at] = (flipped[at] ?? 0) ^ 0xff;
    const cases: [Buffer, RegExp][] = [
      [flipped, /damaged: the compressed file cannot be read \(the checksum does not match \(chunk \d+\)/],
      [good.subarray(0, good.length - 7), /damaged: the compressed file cannot be read \(chunk \d+ ends at byte \d+, past the file's \d+/],
    ];
    for (const [n, [damaged, message]] of cases.entries()) {
      fs.writeFileSync(snapshot, damaged);
      const b = await openTemp(home);
      expect(b.store.warnings.join('\n')).toMatch(message);
      expect(fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-'))).toHaveLength(n + 1);
      expect(b.memory.status().entries).toBe(10);
      b.store.close();
    }
  });

  it('the idle checkpoint (compressed on the thread pool) writes a snapshot that opens, and close() leaves one covering every line', async () => {
    const home = tempHome('idlesnap');
    const a = await openServices({ home, wasmPath: WASM_PATH, checkpointBytes: 1, checkpointIdleMs: 5 });
    // Distinct words make a database of several snapshot chunks, so a checkpoint copies the unchanged ones from the open file.
    for (let i = 0; i < 30; i++) await a.memory.remember({ statement: `idle checkpoint note ${i} ${'words '.repeat(40)} ${Array.from({ length: 3000 }, (_, k) => `w${i}x${k}`).join(' ')}` }, 'test');
    const snapshot = path.join(home, 'store.sqlite');
    // The timer fires, exports, and hands compression to the thread pool; the file appears after it.
    await expect.poll(() => fs.existsSync(snapshot), { timeout: 10_000, interval: 5 }).toBe(true);
    const b = await openTemp(home);
    expect(b.memory.status().entries).toBe(30);
    b.store.close();

    // A write, then close() checkpoints synchronously while an idle one may still be compressing:
    // the file left must be the newer one (it covers every line, so a reopen replays nothing).
    await a.memory.remember({ statement: 'the last word before closing' }, 'test');
    await new Promise((r) => setTimeout(r, 8));
    a.store.close();
    await new Promise((r) => setTimeout(r, 300)); // any background compression has finished by now
    const journalBytes = fs.statSync(path.join(home, 'journal.jsonl')).size;
    const SQL = await loadSqlJs(WASM_PATH);
    const onDisk = new SQL.Database(databaseOf(fs.readFileSync(snapshot)));
    expect(queryRows(onDisk, "SELECT value FROM meta WHERE key = 'journal_offset'")).toEqual([{ value: String(journalBytes) }]);
    onDisk.close();
    const c = await openTemp(home);
    expect(c.memory.status().entries).toBe(31);
    c.store.close();
  });
});
