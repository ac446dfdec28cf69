import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { build } from 'rolldown';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openServices, type Services } from '../../src/core/services';
import { StoreCorruptError } from '../../src/core/store/errors';
import { FileLock } from '../../src/core/store/fileLock';
import { SEALED_DIR } from '../../src/core/store/journal';
import { sealCovered } from '../../src/core/store/journalSeal';
import { queryRows, type Database } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const open: Services[] = [];
async function openStore(home: string, sealBytes = 1, sealDelayMs?: number): Promise<Services> {
  const s = await openServices({ home, wasmPath: WASM_PATH, sealBytes, ...(sealDelayMs === undefined ? {} : { sealDelayMs }) });
  open.push(s);
  return s;
}
function closeAll(): void {
  for (const s of open.splice(0)) s.store.close();
}
afterEach(closeAll);

/** Every row of every table (search index shadow tables included), so any difference shows. */
function dump(db: Database): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const { name } of queryRows(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")) {
    out[String(name)] = queryRows(db, `SELECT * FROM "${String(name)}" ORDER BY rowid`);
  }
  return out;
}

const skipped = (s: Services) => s.store.warnings.filter((w) => w.startsWith('journal line at byte'));
const journalFile = (home: string) => path.join(home, 'journal.jsonl');
const segments = (home: string) => (fs.existsSync(path.join(home, SEALED_DIR)) ? fs.readdirSync(path.join(home, SEALED_DIR)).sort() : []);

/**
 * A store whose journal holds every kind of line: small ops, large ones (imported
 * transcripts), an unparseable line, an empty line and a line torn by a crash and closed off by
 * the next append. Returns the ids of the notes written.
 */
async function fillStore(s: Services, label: string): Promise<string[]> {
  const ids: string[] = [];
  const note = async (text: string) => {
    const r = await s.memory.remember({ statement: `${label} ${text}` }, 'test');
    if (r.ok) ids.push(String(r.id));
  };
  await note('first note about kestrels');
  await s.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
  fs.appendFileSync(journalFile(s.store.home), 'this is not json\n\n{"op":"memory.note.added","at":17,"trunc');
  await note('after the torn line');
  await s.memory.saveFact({ subject: 'build tool', predicate: 'is', object: 'Vite 8' }, 'test');
  return ids;
}

describe('journal sealing', () => {
  it('keeps every operation, offset and skipped line: replay through segment + live file equals a store that never sealed', async () => {
    const home = tempHome('seal');
    const a = await openStore(home);
    const ids = await fillStore(a, 'a');
    a.store.checkpoint();
    const covered = a.store.version;
    await a.memory.remember({ statement: 'a tail line written after the checkpoint' }, 'test');
    const unsealedBytes = fs.statSync(journalFile(home)).size;
    // A torn last line (a writer killed mid-write) at the time of the seal moves to the new file as it is.
    const torn = '{"op":"memory.note.added","at":18,"torn at the end';
    fs.appendFileSync(journalFile(home), torn);
    const never = tempHome('never-sealed');
    fs.cpSync(home, never, { recursive: true });

    const sealed = await a.store.sealJournal();
    expect(sealed).toMatchObject({ start: 0, end: covered, sealedBytes: covered });
    expect(sealed?.segmentBytes).toBeLessThan(covered / 2);
    expect(segments(home)).toEqual([`0-${covered}.br`]);
    const live = fs.readFileSync(journalFile(home), 'utf8');
    expect(live.split('\n')[0]).toBe(`{"recollect_journal":1,"base":${covered}}`);
    expect(live.endsWith(`\n${torn}`)).toBe(true);
    expect(a.store.version).toBe(unsealedBytes); // logical offsets did not move

    const b = await openStore(never);
    await Promise.all([a.store.rebuild(), b.store.rebuild()]);
    expect(a.store.version).toBe(b.store.version);
    expect(a.store.journalProblems).toBe(2);
    expect(a.store.journalProblems).toBe(b.store.journalProblems);
    expect(skipped(a).slice(-2)).toEqual(skipped(b).slice(-2));
    expect(dump(a.store.db)).toEqual(dump(b.store.db));
    const notes = new Set(queryRows(a.store.db, 'SELECT id FROM notes').map((r) => String(r.id)));
    expect(ids.every((id) => notes.has(id))).toBe(true);

    // The open path's replay (no snapshot) reads the segment too, and later writes land past it.
    closeAll();
    fs.rmSync(path.join(home, 'store.sqlite'));
    fs.rmSync(path.join(never, 'store.sqlite'));
    const c = await openStore(home);
    const d = await openStore(never);
    expect(dump(c.store.db)).toEqual(dump(d.store.db));
    await c.memory.remember({ statement: 'written after the seal' }, 'test');
    expect(c.store.journalProblems).toBe(3); // the torn line, closed off by that append, at its logical offset
    expect(c.store.warnings.at(-1)).toBe(`journal line at byte ${unsealedBytes} skipped: unparseable line (${torn.length} chars)`);
    expect(fs.statSync(journalFile(home)).size - (live.indexOf('\n') + 1) + covered).toBe(c.store.version);
  });

  it('another holder of the old file keeps converging and appending across a rotation (in-process and a real MCP server)', async () => {
    const home = tempHome('seal-peer');
    const a = await openStore(home);
    const b = await openStore(home);
    await fillStore(a, 'a');
    expect(b.memory.status().entries).toBe(2);
    a.store.checkpoint();
    await a.memory.remember({ statement: 'tail before the seal' }, 'test');
    const { connectMcp } = await import('./helpers/mcpClient');
    const mcp = await connectMcp(home, 'peer');
    try {
      expect(await mcp.call('remember', { statement: 'from the server before the seal' })).toMatchObject({ ok: true });
      expect(await a.store.sealJournal()).toBeDefined();
      // b still holds the replaced file: it reads nothing new there, then follows the new one.
      await b.memory.remember({ statement: 'b writes after the seal' }, 'test');
      expect(await mcp.call('remember', { statement: 'from the server after the seal' })).toMatchObject({ ok: true });
      await a.memory.remember({ statement: 'a writes after the seal' }, 'test');
      for (const s of [a, b]) expect(s.memory.status().entries).toBe(7);
      expect(await mcp.call('memory_status', {})).toMatchObject({ entries: 7 });
      expect(a.store.version).toBe(b.store.version);
      expect(dump(a.store.db)).toEqual(dump(b.store.db));
    } finally {
      await mcp.close();
    }
    // Nothing went to the replaced file: a fresh replay from the segment + live file has it all.
    await a.store.rebuild();
    expect(a.memory.status().entries).toBe(7);
    expect(dump(a.store.db)).toEqual(dump(b.store.db));
  });

  it('seals again on top of an earlier segment, and replays across both', async () => {
    const home = tempHome('seal-twice');
    const a = await openStore(home);
    await fillStore(a, 'one');
    a.store.checkpoint();
    const first = await a.store.sealJournal();
    await a.memory.remember({ statement: 'between the seals' }, 'test');
    a.store.checkpoint();
    const second = await a.store.sealJournal();
    expect(second).toMatchObject({ start: first?.end, end: a.store.version });
    expect(segments(home)).toHaveLength(2);
    const before = dump(a.store.db);
    await a.store.rebuild();
    expect(dump(a.store.db)).toEqual(before);

    // Capped segments: the next covered prefix goes into several, each cut at a line end.
    for (let i = 0; i < 40; i++) await a.memory.remember({ statement: `capped note ${i}: ${'a kestrel hovers into the wind '.repeat(8)}` }, 'test');
    a.store.checkpoint();
    const lock = new FileLock(path.join(home, 'journal.lock'));
    const capped = await sealCovered({ journalPath: journalFile(home), sealedDir: path.join(home, SEALED_DIR), lock, upTo: a.store.version, minBytes: 1, maxSegmentBytes: 4096 });
    expect(capped).toMatchObject({ start: second?.end, end: a.store.version });
    expect(segments(home).length).toBeGreaterThan(4);
    const after = dump(a.store.db);
    await a.store.rebuild();
    expect(dump(a.store.db)).toEqual(after);
  });

  it('seals while another process holds the journal open: nothing looks at other processes, so every platform seals alike', async () => {
    const home = tempHome('seal-held');
    const a = await openStore(home);
    await fillStore(a, 'a');
    a.store.checkpoint();
    const other = spawn(process.execPath, ['-e', `require('fs').openSync(${JSON.stringify(journalFile(home))}, 'a'); console.log('held'); setInterval(() => {}, 1000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => other.stdout.once('data', () => resolve()));
      expect(await a.store.sealJournal()).toMatchObject({ start: 0, end: a.store.version });
      expect(segments(home)).toHaveLength(1);
      expect(a.store.warnings.filter((w) => w.includes('not sealed'))).toEqual([]);
    } finally {
      other.kill('SIGKILL');
      await new Promise((resolve) => other.once('exit', resolve));
    }
  });

  it('a process that opens a store whose snapshot covers enough unsealed journal seals it a while later', async () => {
    const home = tempHome('seal-open');
    const a = await openStore(home);
    await fillStore(a, 'a');
    closeAll(); // close() checkpoints but never seals: it cannot wait
    expect(segments(home)).toEqual([]);
    const b = await openStore(home, 1, 20);
    const deadline = Date.now() + 10_000;
    while (!fs.readFileSync(journalFile(home), 'utf8').startsWith('{"recollect_journal"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(segments(home)).toEqual([`0-${b.store.version}.br`]);
    await b.memory.remember({ statement: 'after the open-time seal' }, 'test');
    expect(b.memory.status().entries).toBe(3);
  });

  it('does nothing below the size threshold, and a store without a header (every older store) opens and appends unchanged', async () => {
    const home = tempHome('seal-old');
    const a = await openStore(home, 4 * 1024 * 1024);
    await a.memory.remember({ statement: 'an old store' }, 'test');
    a.store.checkpoint();
    expect(await a.store.sealJournal()).toBeUndefined();
    expect(segments(home)).toEqual([]);
    const text = fs.readFileSync(journalFile(home), 'utf8');
    expect(text.startsWith('{"op":')).toBe(true);
    closeAll();
    const b = await openStore(home);
    await b.memory.remember({ statement: 'still plain' }, 'test');
    expect(fs.readFileSync(journalFile(home), 'utf8').startsWith(text)).toBe(true);
    expect(b.store.version).toBe(fs.statSync(journalFile(home)).size);
  });

  it('a damaged or missing segment is a clear error when a replay needs it, and is left in place; a store whose snapshot covers it still opens', async () => {
    const home = tempHome('seal-damaged');
    const a = await openStore(home);
    await fillStore(a, 'a');
    a.store.checkpoint();
    await a.store.sealJournal();
    closeAll();
    const [name] = segments(home);
    const seg = path.join(home, SEALED_DIR, String(name));
    const bytes = fs.readFileSync(seg);
    const damaged = Buffer.from(bytes);
    damaged[Math.floor(damaged.length / 2)] = (damaged[Math.floor(damaged.length / 2)] ?? 0) ^ 0xff;
    fs.writeFileSync(seg, damaged);

    const b = await openStore(home); // the snapshot covers the sealed prefix: no segment read
    expect(b.memory.status().entries).toBe(2);
    await expect(b.store.rebuild()).rejects.toThrow(/sealed journal segment .* is damaged/);
    expect(b.memory.status().entries).toBe(2); // the old database stays in use
    closeAll();

    fs.rmSync(path.join(home, 'store.sqlite'));
    const err = await openStore(home).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreCorruptError);
    expect((err as StoreCorruptError).path).toBe(seg);
    expect(fs.readFileSync(seg)).toEqual(damaged);

    fs.rmSync(seg);
    await expect(openStore(home)).rejects.toThrow(/were sealed, but no segment .* holds them/);
    fs.writeFileSync(seg, bytes);
    const c = await openStore(home);
    expect(c.memory.status().entries).toBe(2);
  });
});

describe('journal format versions', () => {
  it('a live journal whose header names another format version is refused at open with the reason, and nothing is changed', async () => {
    for (const [version, who] of [[2, 'a newer build; this build reads version 1 only. Nothing was changed: update Recollect.'], [0, 'an earlier build; this build reads version 1 only. Nothing was changed.']] as const) {
      const home = tempHome('journal-version');
      const text = `{"recollect_journal":${version},"base":0}\n{"op":"memory.note.added","at":1,"text":"x"}\n`;
      fs.writeFileSync(journalFile(home), text);
      const err = await openStore(home).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreCorruptError);
      expect((err as Error).message).toBe(`journal ${journalFile(home)} is in journal format version ${version}, written by ${who}`);
      expect(fs.readFileSync(journalFile(home), 'utf8')).toBe(text);
      expect(fs.existsSync(path.join(home, 'store.sqlite'))).toBe(false);
    }
  });

  it('a sealed segment of another format version stops a replay with the reason; a line an earlier build packed (stored unpacked, negative length) is skipped and counted', async () => {
    const home = tempHome('segment-version');
    const a = await openStore(home);
    await fillStore(a, 'a');
    a.store.checkpoint();
    await a.store.sealJournal();
    const problems = a.store.journalProblems;
    closeAll();
    const [name] = segments(home);
    const seg = path.join(home, SEALED_DIR, String(name));
    const original = fs.readFileSync(seg);
    const body = brotliDecompressSync(original);
    const headerEnd = body.indexOf(0x0a);
    const header = JSON.parse(body.toString('utf8', 0, headerEnd)) as { recollect_segment: number; lens: number[] };
    const rewrite = (h: object) => fs.writeFileSync(seg, brotliCompressSync(Buffer.concat([Buffer.from(JSON.stringify(h) + '\n'), body.subarray(headerEnd + 1)])));
    fs.rmSync(path.join(home, 'store.sqlite'));

    rewrite({ ...header, recollect_segment: 2 });
    await expect(openStore(home)).rejects.toThrow(/sealed journal segment .* is damaged \(it is in segment format version 2; this build reads version 1 only\)/);

    // The first line (the first note) as an earlier build's seal stored a packed line.
    rewrite({ ...header, lens: header.lens.map((n, i) => (i === 0 ? -n : n)) });
    const b = await openStore(home);
    expect(b.store.journalProblems).toBe(problems + 1);
    expect(b.store.warnings).toContain('journal line at byte 0 skipped: a line an earlier build packed (stored unpacked in its sealed segment), a line encoding this build does not read');
    expect(b.memory.status().entries).toBe(1);
  });
});

describe('kill -9 in the middle of sealing', () => {
  let child = '';
  beforeAll(async () => {
    child = path.join(tempHome('sealchild'), 'sealChild.cjs');
    await build({ input: path.join(__dirname, 'helpers/sealChild.ts'), platform: 'node', logLevel: 'warn', output: { file: child, format: 'cjs' } });
  });

  for (const step of ['segment-written', 'segment-placed', 'live-written', 'live-swapped'] as const) {
    it(`loses and duplicates nothing when the sealing process dies after "${step}"`, async () => {
      const home = tempHome(`seal-kill-${step}`);
      const a = await openStore(home);
      const ids = await fillStore(a, 'a');
      a.store.checkpoint();
      const covered = a.store.version;
      await a.memory.remember({ statement: 'tail line' }, 'test');
      const before = dump(a.store.db);
      closeAll();

      const run = spawnSync(process.execPath, [child, home, String(covered), step], { encoding: 'utf8' });
      expect(run.signal).toBe('SIGKILL');
      // It died where it was told to: the header (the swap) only at the last step.
      expect(fs.readFileSync(journalFile(home), 'utf8').startsWith('{"recollect_journal"')).toBe(step === 'live-swapped');
      expect(segments(home).filter((n) => n.endsWith('.br'))).toEqual(step === 'segment-written' ? [] : [`0-${covered}.br`]);
      expect(fs.readdirSync(home).some((n) => n.startsWith('journal.jsonl.tmp-'))).toBe(step === 'live-written');

      fs.rmSync(path.join(home, 'store.sqlite')); // replay everything: through the segment if the swap happened
      const b = await openStore(home);
      expect(b.store.journalProblems).toBe(2);
      const rows = dump(b.store.db);
      expect(rows).toEqual(before);
      expect(ids.every((id) => rows.notes?.some((n) => (n as { id: string }).id === id))).toBe(true);
      await b.memory.remember({ statement: 'after the crash' }, 'test');

      // A later seal finishes the job, cleaning what the dead one left.
      b.store.checkpoint();
      const done = spawnSync(process.execPath, [child, home, String(b.store.version), 'none'], { encoding: 'utf8' });
      expect(done.status, done.stderr).toBe(0);
      expect(fs.readdirSync(path.join(home, SEALED_DIR)).filter((n) => n.includes('.tmp-'))).toEqual([]);
      expect(fs.readdirSync(home).filter((n) => n.includes('.tmp-'))).toEqual([]);
      await b.store.rebuild();
      expect(b.memory.status().entries).toBe(4);
      expect(b.store.journalProblems).toBe(2);
    });
  }
});

describe('sealing a large prefix', () => {
  it('streams it: the segment holds exactly the bytes, and the seal never holds the prefix or its output whole', async () => {
    const home = tempHome('seal-stream');
    fs.mkdirSync(home, { recursive: true });
    const file = journalFile(home);
    // 24 MB of lines a journal could hold (no header: the live file of a store that never sealed).
    let seed = 11;
    const word = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 100_000).toString(36);
    const lines: string[] = [];
    for (let bytes = 0; bytes < 24 * 1024 * 1024; ) {
      const line = JSON.stringify({ op: 'memory.note.added', at: lines.length, text: Array.from({ length: 40 + (lines.length % 300) }, word).join(' ') }) + '\n';
      lines.push(line);
      bytes += line.length;
    }
    const all = Buffer.from(lines.join(''), 'utf8');
    fs.writeFileSync(file, all);
    const lock = new FileLock(path.join(home, 'journal.lock'));
    const upTo = all.length - (lines.at(-1) as string).length; // the last line stays live
    const base = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)), 2);
    const sealed = await sealCovered({ journalPath: file, sealedDir: path.join(home, SEALED_DIR), lock, upTo, minBytes: 1 });
    clearInterval(sampler);
    expect(sealed).toMatchObject({ start: 0, end: upTo });
    // A whole-prefix seal held the 24 MB prefix and then its output in buffers.
    expect(peak).toBeLessThan(8 * 1024 * 1024);
    const [seg] = segments(home);
    const body = brotliDecompressSync(fs.readFileSync(path.join(home, SEALED_DIR, seg as string)));
    const headerEnd = body.indexOf(0x0a);
    const header = JSON.parse(body.toString('utf8', 0, headerEnd)) as { start: number; end: number; lens: number[] };
    expect(header).toMatchObject({ start: 0, end: upTo });
    expect(header.lens).toEqual(lines.slice(0, -1).map((l) => Buffer.byteLength(l)));
    expect(body.subarray(headerEnd + 1).equals(all.subarray(0, upTo))).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(`{"recollect_journal":1,"base":${upTo}}\n${lines.at(-1) as string}`);

    // A cap below the first line's length: that line goes whole, cut at its end.
    const home2 = tempHome('seal-stream-long');
    fs.mkdirSync(home2, { recursive: true });
    fs.writeFileSync(journalFile(home2), lines.slice(0, 3).join(''));
    const lock2 = new FileLock(path.join(home2, 'journal.lock'));
    const first = Buffer.byteLength(lines[0] as string);
    const one = await sealCovered({ journalPath: journalFile(home2), sealedDir: path.join(home2, SEALED_DIR), lock: lock2, upTo: first + Buffer.byteLength(lines[1] as string), minBytes: 1, maxSegmentBytes: 16 });
    expect(one).toMatchObject({ start: 0, end: first + Buffer.byteLength(lines[1] as string) });
    expect(segments(home2)).toEqual([`0-${first}.br`, `${first}-${one?.end}.br`]);
  });
});
