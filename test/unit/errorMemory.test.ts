import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { errorHistoryTool } from '../../src/core/tools/errorHistory';
import { invokeTool } from '../../src/core/tools/invoke';
import type { ToolDefinition } from '../../src/core/tools/toolDefinition';
import { writeErrorTool } from '../../src/core/tools/writeError';
import { openTemp, tempHome } from './helpers/tempStore';

type Reply = Record<string, unknown>;

/** The real wiring: openServices with every store module, on a temp folder. */
const open = (home = tempHome('errors'), now?: () => number): Promise<Services> => openTemp(home, now);

const history = (s: Services, input: unknown) => invokeTool(errorHistoryTool as ToolDefinition, input, s, { client: 'vitest' }) as Promise<Reply>;
const write = (s: Services, input: unknown) => invokeTool(writeErrorTool as ToolDefinition, input, s, { client: 'vitest' }) as Promise<Reply>;

const FIX = {
  tool_name: 'read_file',
  keywords: ['ENOENT', 'relative path'],
  symptom: 'ENOENT: no such file or directory, open src/app.ts',
  cause: 'the path was relative to the wrong working directory',
  action: 'pass the absolute path built from the workspace root',
  outcome: 'resolved',
};

function records(r: Reply): { hash: string; action: string; tool_name: string; keywords: string[] }[] {
  return r.records as { hash: string; action: string; tool_name: string; keywords: string[] }[];
}

describe('write_error and error_history on a real store', () => {
  it('stores a resolved failure under an 8-char sha256 hash and finds it by keyword with its fix', async () => {
    const s = await open();
    const r = await write(s, FIX);
    const expected = createHash('sha256').update(['read_file', FIX.symptom, FIX.action].join('\u0000')).digest('hex').slice(0, 8);
    expect(r).toMatchObject({ ok: true, recorded: true, hash: expected, new: true, times_recorded: 1 });

    for (const query of ['ENOENT', 'read_file', 'working directory', 'absolute path workspace', 'relative']) {
      const found = await history(s, { query });
      expect(found, query).toMatchObject({ ok: true, mode: 'search', total: 1 });
      expect(records(found)[0]).toMatchObject({ hash: expected, action: FIX.action, tool_name: 'read_file', cause: FIX.cause, outcome: 'resolved', source: 'vitest' });
    }
    expect(await history(s, { query: 'ENOENT', mode: 'search' })).toMatchObject({ total: 1 });
    s.store.close();
  });

  it('accepts failed and abandoned outcomes but stores nothing, and says so', async () => {
    const s = await open();
    for (const outcome of ['failed', 'abandoned']) {
      const r = await write(s, { ...FIX, outcome });
      expect(r).toMatchObject({ ok: true, recorded: false, stored: false, outcome });
      expect(String(r.note)).toContain('not stored');
    }
    expect(await history(s, { query: 'ENOENT' })).toMatchObject({ ok: true, total: 0, records: [] });
    s.store.close();
  });

  it('recording the same fix again updates one record: keywords merged, newer cause kept, confirmations counted', async () => {
    let clock = Date.parse('2026-11-01T10:00:00Z');
    const s = await open(undefined, () => clock);
    const first = await write(s, { ...FIX, cause: undefined });
    clock += 60_000;
    const again = await write(s, { ...FIX, keywords: ['enoent', 'cwd'], symptom: `  ${FIX.symptom}\n` });
    expect(again).toMatchObject({ ok: true, recorded: true, hash: first.hash, new: false, times_recorded: 2 });
    const found = await history(s, { query: 'cwd' });
    expect(found.total).toBe(1);
    expect(records(found)[0]).toMatchObject({
      keywords: ['ENOENT', 'relative path', 'cwd'],
      cause: FIX.cause,
      times_recorded: 2,
      first_recorded_at: '2026-11-01T10:00:00.000Z',
      last_recorded_at: '2026-11-01T10:01:00.000Z',
    });
    // A different fix for the same symptom is its own record.
    const other = await write(s, { ...FIX, action: 'open the file through the workspace file API' });
    expect(other.hash).not.toBe(first.hash);
    expect((await history(s, { query: 'ENOENT' })).total).toBe(2);
    s.store.close();
  });

  it('returns 4 records by default, honours a smaller limit and caps limit at 16, saying so', async () => {
    const s = await open();
    for (let i = 0; i < 20; i++) await write(s, { ...FIX, symptom: `timeout number ${i} while fetching`, keywords: ['timeout'] });
    const byDefault = await history(s, { query: 'timeout' });
    expect(byDefault).toMatchObject({ ok: true, limit: 4, shown: 4, total: 20 });
    expect(byDefault.note).toBeUndefined();
    expect(await history(s, { query: 'timeout', limit: 6 })).toMatchObject({ limit: 6, shown: 6 });
    expect(await history(s, { query: 'timeout', limit: 16 })).toMatchObject({ limit: 16, shown: 16 });
    const capped = await history(s, { query: 'timeout', limit: 40 });
    expect(capped).toMatchObject({ ok: true, limit: 16, shown: 16, total: 20 });
    expect(String(capped.note)).toContain('limit 40 was capped at 16');
    expect(await history(s, { query: 'timeout', limit: 0 })).toMatchObject({ ok: false });
    s.store.close();
  });

  it('infers the mode: hash means read, otherwise search; asks for what a mode needs', async () => {
    const s = await open();
    const { hash } = await write(s, FIX);
    expect(await history(s, { hash })).toMatchObject({ ok: true, mode: 'read', record: { hash, action: FIX.action } });
    expect(await history(s, { hash, query: 'nothing like it' })).toMatchObject({ ok: true, mode: 'read' });
    expect(await history(s, { query: 'ENOENT' })).toMatchObject({ ok: true, mode: 'search' });
    expect(await history(s, { mode: 'read', query: 'ENOENT' })).toMatchObject({ ok: false, reason: expect.stringContaining('needs `hash`') });
    expect(await history(s, { mode: 'search', hash })).toMatchObject({ ok: false, reason: expect.stringContaining('needs `query`') });
    expect(await history(s, {})).toMatchObject({ ok: false, reason: expect.stringContaining('`query`') });
    s.store.close();
  });

  it('reads one record by hash, resolves a `no data: {hash}` line, and refuses an unknown or malformed hash', async () => {
    const s = await open();
    const { hash } = (await write(s, FIX)) as { hash: string };
    expect(await history(s, { mode: 'read', hash: `no data: ${hash}` })).toMatchObject({ ok: true, record: { hash } });
    expect(await history(s, { hash: hash.toUpperCase() })).toMatchObject({ ok: true, record: { hash } });
    const unknown = await history(s, { hash: hash === '00000000' ? '00000001' : '00000000' });
    expect(unknown).toMatchObject({ ok: false });
    expect(String(unknown.reason)).toMatch(/no error record has hash 0000000[01]/);
    expect(await history(s, { hash: 'xyz' })).toMatchObject({ ok: false });
    expect(await history(s, { hash: `${hash}00` })).toMatchObject({ ok: false });
    s.store.close();
  });

  it('refuses mode=write and names write_error, with or without the old write fields', async () => {
    const s = await open();
    const bare = await history(s, { mode: 'write' });
    expect(bare).toMatchObject({ ok: false });
    expect(String(bare.reason)).toMatch(/removed.*write_error/);
    const withFields = await history(s, { mode: 'write', tool_name: 'x', symptom: 'y', action: 'z', keywords: ['k'], outcome: 'resolved' });
    expect(withFields).toMatchObject({ ok: false });
    expect(String(withFields.reason)).toMatch(/removed.*write_error/);
    expect(await history(s, { query: 'x', tool_name: 'x' })).toMatchObject({ ok: false, reason: expect.stringContaining('Unrecognized key') });
    s.store.close();
  });

  it('refuses a write missing a required field, with no keywords, a bad outcome, a control character or a blank field', async () => {
    const s = await open();
    const noAction: Partial<typeof FIX> = { ...FIX };
    delete noAction.action;
    const cases: [string, unknown][] = [
      ['missing action', noAction],
      ['empty keywords', { ...FIX, keywords: [] }],
      ['keywords not an array', { ...FIX, keywords: 'ENOENT' }],
      ['bad outcome', { ...FIX, outcome: 'fixed' }],
      ['control character', { ...FIX, symptom: 'bell\u0007' }],
      ['blank action', { ...FIX, action: '   ' }],
      ['blank keyword', { ...FIX, keywords: ['ok', ' '] }],
      ['unknown field', { ...FIX, severity: 'high' }],
    ];
    for (const [label, input] of cases) expect(await write(s, input), label).toMatchObject({ ok: false });
    expect((await history(s, { query: 'ENOENT' })).total).toBe(0);
    s.store.close();
  });

  it('treats FTS operators in a query as words and refuses a query with none', async () => {
    const s = await open();
    await write(s, FIX);
    expect(await history(s, { query: 'ENOENT OR NEAR(x) -path "' })).toMatchObject({ ok: true });
    expect(await history(s, { query: '!!!' })).toMatchObject({ ok: false });
    s.store.close();
  });

  it('keeps records across a reopen, rebuilt from the journal', async () => {
    const home = tempHome('errors-reopen');
    const a = await open(home);
    const { hash } = await write(a, FIX);
    a.store.close();
    const b = await open(home);
    expect(await history(b, { hash })).toMatchObject({ ok: true, record: { hash, action: FIX.action } });
    expect(await write(b, FIX)).toMatchObject({ hash, new: false, times_recorded: 2 });
    b.store.close();
  });

  it('describes both tools with the spec names and the removal of mode=write', () => {
    expect(errorHistoryTool.name).toBe('error_history');
    expect(writeErrorTool.name).toBe('write_error');
    expect(errorHistoryTool.description).toContain('write_error');
    expect(errorHistoryTool.description).toContain('capped at 16');
  });
});
