import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCERPT_CHARS } from '../../src/core/activity/activityRow';
import { SessionBrowse } from '../../src/core/history/sessionBrowse';
import { ResultWriter } from '../../src/core/results/resultWriter';
import { openServices, type Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { callTool } from './helpers/memoryCall';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';
import { SMALL_DAG } from './lcm/lcmFixture';

/** Deliverables go to a temp folder, never the machine's ~/Downloads. */
const resultsIn = (folder: string) => new ResultWriter({ outputDirectory: folder, fallbackDirectory: folder });

/** A word no fixture holds: any place it turns up after the calls below, a call put it there. */
const MARKER = 'zqxmarkerwombat';

let s: Services;
let home: string;
beforeAll(async () => {
  home = tempHome('activity');
  s = await openServices({ home, wasmPath: WASM_PATH }, { lcm: SMALL_DAG });
  await s.importer.importPaths([transcriptFixtures()]);
  await s.lcm.buildAll();
  await callTool(s, 'remember', { statement: 'The build uses Vite 8 and ollama for local models' });
});
afterAll(() => s.store.close());

const journal = () => fs.readFileSync(path.join(home, 'journal.jsonl'));

/** Every read tool a person's agent would call over and over, each naming MARKER somewhere in its input. */
const READS: [string, Record<string, unknown>][] = [
  ['chat_history', { mode: 'search', query: `ollama ${MARKER}` }],
  ['chat_history', { mode: 'search', query: 'ollama' }],
  ['chat_history', { mode: 'list' }],
  ['chat_history', { mode: 'tool_list' }],
  ['search_text', { query: `vite ${MARKER}` }],
  ['search_text', { query: 'vite' }],
  ['memory_status', {}],
  ['get_context', { query: `which build tool ${MARKER}` }],
  ['memory_map', { query: `vite ${MARKER}` }],
  ['lookup_entity', { name: MARKER }],
  ['lcm_grep', { pattern: MARKER, scope: 'both', allConversations: true }],
  ['lcm_grep', { pattern: `ollama ${MARKER}`, mode: 'full_text', allConversations: true }],
  ['error_history', { query: MARKER }],
];

describe("Recollect's own tool calls stay out of every recalled corpus", () => {
  it('the same chat_history search 20 times gives identical hits in identical order', async () => {
    const first = await callTool(s, 'chat_history', { mode: 'search', query: 'ollama' });
    expect(first.ok, String(first.reason)).toBe(true);
    expect((first.hits as unknown[]).length).toBeGreaterThan(0);
    for (let i = 1; i < 20; i++) expect(await callTool(s, 'chat_history', { mode: 'search', query: 'ollama' })).toEqual(first);
  });

  it('100 read calls leave the journal byte for byte as it was and the store version where it was', async () => {
    const before = journal();
    s.store.refresh();
    const version = s.store.version;
    for (let i = 0; i < 100; i++) {
      const [tool, input] = READS[i % READS.length]!;
      const r = await callTool(s, tool, input);
      expect(r.ok, `${tool}: ${String(r.reason)}`).not.toBe(false);
    }
    s.store.refresh();
    expect(s.store.version).toBe(version);
    expect(journal().equals(before)).toBe(true);
  });

  it('after many calls naming a word, no corpus holds it: history index, sessions, summaries, chat_history, lcm_grep, get_context, search_text', async () => {
    const sessionsBefore = queryRows(s.store.db, 'SELECT id FROM sessions ORDER BY id').map((r) => String(r.id));
    for (let round = 0; round < 5; round++) for (const [tool, input] of READS) await callTool(s, tool, input);
    // A write's input is written (it is the write); its activity row is not a second copy of it in history.
    s.results = resultsIn(tempHome('results'));
    await callTool(s, 'write_result', { content: `# Report\n\nThe ${MARKER} study.\n` + 'x'.repeat(10_000) });
    await s.lcm.buildAll();
    const db = s.store.db;

    expect(queryRows(db, 'SELECT count(*) AS n FROM history_fts WHERE history_fts MATCH ?', [MARKER])[0]?.n).toBe(0);
    expect(queryRows(db, 'SELECT count(*) AS n FROM events WHERE instr(lower(text), ?) > 0', [MARKER])[0]?.n).toBe(0);
    expect(queryRows(db, 'SELECT count(*) AS n FROM lcm_summaries WHERE instr(lower(content), ?) > 0', [MARKER])[0]?.n).toBe(0);
    expect(queryRows(db, 'SELECT id FROM sessions ORDER BY id').map((r) => String(r.id))).toEqual(sessionsBefore);
    const listed = new SessionBrowse(s.store).list({ limit: 500 });
    expect(listed.sessions.map((x) => x.id).sort()).toEqual([...sessionsBefore].sort());
    expect(JSON.stringify(listed)).not.toMatch(/Recollect tool calls/);
    expect(s.history.counts().sessions).toBe(sessionsBefore.length);

    const search = await callTool(s, 'chat_history', { mode: 'search', query: MARKER });
    expect(search.hits).toEqual([]);
    const list = await callTool(s, 'chat_history', { mode: 'list' });
    expect(JSON.stringify(list)).not.toContain(MARKER);
    const grep = await callTool(s, 'lcm_grep', { pattern: MARKER, scope: 'both', allConversations: true });
    expect(grep.matches).toEqual([]);
    const fullText = await callTool(s, 'lcm_grep', { pattern: MARKER, mode: 'full_text', allConversations: true });
    expect(fullText.matches).toEqual([]);
    expect(JSON.stringify(await callTool(s, 'get_context', { query: MARKER }))).not.toContain(MARKER.slice(3));
    expect((await callTool(s, 'search_text', { query: MARKER })).hits).toEqual([]);
  });
});

describe('the activity log', () => {
  it('shows a person each call, newest first, with short excerpts', async () => {
    const t = await openTemp();
    await callTool(t, 'search_text', { query: 'kestrels hover' }, 'claude-code');
    await callTool(t, 'chat_history', { mode: 'read' }, 'codex');
    const rows = t.activity.recent(10).rows;
    expect(rows.map((r) => [r.client, r.tool, r.ok])).toEqual([
      ['codex', 'chat_history', false],
      ['claude-code', 'search_text', true],
    ]);
    expect(rows[1]!.input).toContain('kestrels hover');
    expect(rows[0]!.result).toContain('needs a task_id');
    // Input the schema refuses is noted too, cut to an excerpt.
    await callTool(t, 'remember', { statement: 'z'.repeat(50_000) }, 'codex');
    const [refused] = t.activity.recent(1).rows;
    expect(refused).toMatchObject({ tool: 'remember', ok: false, result: expect.stringContaining('over the limit of 4000') });
    expect(refused!.input.length).toBeLessThanOrEqual(EXCERPT_CHARS + 1);
    t.store.close();
  });

  it('keeps a 7 MB write_result (near its 8 MiB limit) as an excerpt, never as the payload', async () => {
    const t = await openTemp();
    t.results = resultsIn(tempHome('results'));
    const big = 'word '.repeat(1_400_000);
    const r = await callTool(t, 'write_result', { content: big });
    expect(r.ok, String(r.reason)).toBe(true);
    const [row] = t.activity.recent(1).rows;
    expect(row!.tool).toBe('write_result');
    expect(JSON.stringify(row).length).toBeLessThan(2_000);
    expect(fs.statSync(path.join(t.store.home, 'journal.jsonl'), { throwIfNoEntry: false })?.size ?? 0).toBeLessThan(10_000);
    t.store.close();
  });

  it('is bounded: thousands of calls keep the newest, in a fixed number of bytes', async () => {
    const t = await openTemp();
    for (let i = 0; i < 3_000; i++) await t.activity.record({ client: 'bench', tool: 'search_text', input: { query: `query ${i} ${'y'.repeat(400)}` }, result: { ok: true, hits: [] }, ms: 1 });
    const files = fs.readdirSync(t.store.home).filter((f) => f.startsWith('activity'));
    const bytes = files.reduce((n, f) => n + fs.statSync(path.join(t.store.home, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(t.activity.maxBytes);
    const { rows } = t.activity.recent(5);
    expect(rows[0]!.input).toContain('query 2999 ');
    expect(rows.map((r) => Number(/query (\d+)/.exec(r.input)![1]))).toEqual([2999, 2998, 2997, 2996, 2995]);
    const all = t.activity.recent(100_000).rows;
    expect(all.length).toBeLessThan(3_000);
    expect(all.length).toBeGreaterThan(100);
    t.store.close();
  });

  it('is shared by every process on the store home: another opening sees the calls', async () => {
    const h = tempHome('activity-shared');
    const a = await openTemp(h);
    await callTool(a, 'memory_status', {}, 'window-a');
    const b = await openTemp(h);
    await callTool(b, 'memory_status', {}, 'window-b');
    expect(a.activity.recent(5).rows.map((r) => r.client)).toEqual(['window-b', 'window-a']);
    a.store.close();
    b.store.close();
  });
});
