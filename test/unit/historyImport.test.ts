import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/core/store/sqlite';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import type { Services } from '../../src/core/services';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

const FIXTURES = transcriptFixtures();

async function chatHistory(s: Services, input: object, client = 'claude-code') {
  return (await invokeTool(findTool('chat_history')!, input, s, { client })) as Record<string, unknown>;
}

function snapshotOf(s: Services) {
  return queryRows(s.store.db, 'SELECT session_id, key, hash FROM events ORDER BY session_id, key');
}

describe('history import of the real fixtures', () => {
  it('imports every fixture file, and a second import changes nothing', async () => {
    const s = await openTemp();
    const first = await s.importer.importPaths([FIXTURES]);
    const files = [...fs.readdirSync(FIXTURES, { recursive: true })].filter((f) => /\.jsonl?$/.test(String(f)));
    expect(first.files).toBe(files.length);
    expect(first.ignored_files).toBe(0);
    expect(first.events).toBeGreaterThan(100);
    const before = snapshotOf(s);

    const again = await s.importer.importPaths([FIXTURES]);
    expect(again.events).toBe(0);
    expect(again.unchanged_files).toBe(files.length);
    // Even when size/mtime look new (a touched file), the content decides: nothing is re-journaled.
    const home = tempHome('copy');
    fs.cpSync(FIXTURES, home, { recursive: true });
    const fromCopy = await s.importer.importPaths([home]);
    expect(fromCopy.events).toBe(0);
    expect(snapshotOf(s)).toEqual(before);
    s.store.close();
  });

  it('a grown JSONL imports only its new lines; a garbage line is reported with file and line', async () => {
    const s = await openTemp();
    const dir = tempHome('grow');
    const src = path.join(FIXTURES, 'claude-code/project-a/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl');
    const lines = fs.readFileSync(src, 'utf8').split('\n').filter(Boolean);
    const file = path.join(dir, 'b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl');
    const half = Math.floor(lines.length / 2);
    fs.writeFileSync(file, lines.slice(0, half).join('\n') + '\n');
    const first = await s.importer.importPaths([file]);
    const eventsAfterHalf = Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM events')[0]!.n);
    expect(first.events).toBe(eventsAfterHalf);

    fs.appendFileSync(file, '{this is not json\n' + lines.slice(half).join('\n') + '\n');
    const grown = await s.importer.importPaths([file]);
    expect(grown.skipped_lines).toBe(1);
    expect(grown.problems).toEqual([expect.objectContaining({ file, line: half + 1 })]);
    const total = Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM events')[0]!.n);
    expect(grown.events).toBe(total - eventsAfterHalf);

    const whole = await openTemp();
    await whole.importer.importPaths([src]);
    expect(Number(queryRows(whole.store.db, 'SELECT count(*) AS n FROM events')[0]!.n)).toBe(total);
    s.store.close();
    whole.store.close();
  });

  it('a rewritten VS Code session file is reconciled, not duplicated', async () => {
    const s = await openTemp();
    const dir = tempHome('rewrite');
    const file = path.join(dir, 'session.json');
    const data = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'copilot-export/dealenx_chat_succes_mcp.json'), 'utf8'));
    const all = data.requests.length as number;
    fs.writeFileSync(file, JSON.stringify({ ...data, requests: data.requests.slice(0, Math.max(1, all - 1)) }));
    await s.importer.importPaths([file]);
    fs.writeFileSync(file, JSON.stringify(data));
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    await s.importer.importPaths([file]);
    const fresh = await openTemp();
    const direct = path.join(tempHome('direct'), 'session.json');
    fs.writeFileSync(direct, JSON.stringify(data));
    await fresh.importer.importPaths([direct]);
    const keys = (x: Services) => queryRows(x.store.db, 'SELECT key, hash FROM events ORDER BY key').map((r) => `${r.key}:${r.hash}`);
    expect(keys(s)).toEqual(keys(fresh));
    expect(Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM sessions')[0]!.n)).toBe(1);
    s.store.close();
    fresh.store.close();
  });

  it('chat_history lists runs of this session, reads them, finds tool output and searches the archive', async () => {
    const s = await openTemp();
    await s.importer.importPaths([FIXTURES]);
    const list = await chatHistory(s, { mode: 'list' });
    expect(list.session).toMatchObject({ source: 'claude-code' });
    const runs = list.runs as { task_id: string; objective: string | null }[];
    expect(runs.length).toBeGreaterThan(0);

    const read = await chatHistory(s, { mode: 'read', task_id: runs.map((r) => r.task_id).slice(0, 2) });
    expect(read).toMatchObject({ ok: true, scope: 'reference', withheld: { checked: false } });
    expect((read.runs as unknown[]).length).toBe(Math.min(2, runs.length));

    const calls = (await chatHistory(s, { mode: 'tool_list' })).calls as { task_id: string; name: string }[];
    if (calls.length) {
      const out = await chatHistory(s, { mode: 'tool', task_id: calls[0]!.task_id, name: calls[0]!.name });
      expect(out.ok).toBe(true);
    }
    const found = await chatHistory(s, { mode: 'search', query: 'subagents' });
    expect(found.ok).toBe(true);
    expect(Number(found.total)).toBeGreaterThan(0);
    expect(await chatHistory(s, { mode: 'search', query: 'x', match: 'semantic' })).toMatchObject({ semantic: false, hits: [] });
    expect(await chatHistory(s, { mode: 'read' })).toMatchObject({ ok: false });
    expect(await chatHistory(s, { mode: 'list', time_range: 'yesterday-ish' })).toMatchObject({ ok: false });
    s.store.close();
  });
});
