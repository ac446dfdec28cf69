import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ExcludeGlobs } from '../../src/core/history/excludeGlobs';
import { retentionCuts } from '../../src/core/history/retention';
import { queryRows } from '../../src/core/store/sqlite';
import { CLI } from './helpers/mcpClient';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

const FIXTURES = transcriptFixtures();
const CLAUDE_FILE = 'claude-code/project-a/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl';

function cli(home: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function journalText(home: string): string {
  const parts = [fs.readFileSync(path.join(home, 'journal.jsonl'), 'utf8')];
  const sealed = path.join(home, 'journal.sealed');
  for (const f of fs.existsSync(sealed) ? fs.readdirSync(sealed) : []) if (f.endsWith('.br')) parts.push(brotliDecompressSync(fs.readFileSync(path.join(sealed, f))).toString('utf8'));
  return parts.join('\n');
}

describe('recollect forget (CLI)', () => {
  it('forgets a session in one process; the next process finds nothing of it and does not import it again', () => {
    const home = tempHome('forget-cli');
    const file = path.join(FIXTURES, CLAUDE_FILE);
    expect(cli(home, 'import', file).code).toBe(0);
    const externalId = path.basename(file, '.jsonl');
    const before = JSON.parse(cli(home, 'tool', 'chat_history', JSON.stringify({ mode: 'search', query: 'subagent', time_range: 'all' })).out);
    expect(before.hits.some((h: { session_id: string }) => h.session_id !== undefined)).toBe(true);
    const sessionId = before.hits.find((h: { source: string }) => h.source === 'claude-code').session_id as string;

    expect(journalText(home)).toContain('Run 4 subagents in parallel');

    const forgot = cli(home, 'forget', '--session', externalId); // the source's own id is accepted too
    expect(forgot.code).toBe(0);
    expect(JSON.parse(forgot.out)).toMatchObject({ ok: true, sessions: [{ id: sessionId }], warnings: [] });
    const after = JSON.parse(cli(home, 'tool', 'chat_history', JSON.stringify({ mode: 'search', query: 'subagent', time_range: 'all' })).out);
    expect(after.hits.filter((h: { session_id: string }) => h.session_id === sessionId)).toEqual([]);
    // Its words are gone from the journal, live and sealed.
    expect(journalText(home)).not.toContain('Run 4 subagents in parallel');

    const again = JSON.parse(cli(home, 'import', file).out);
    expect(again).toMatchObject({ forgotten_sessions: 1, events: 0 });
    expect(JSON.parse(cli(home, 'forget', '--list').out).forgotten).toEqual([expect.objectContaining({ id: sessionId })]);
  }, 60_000);

  it('exits 2 on a bad request and 3 when nothing matches', () => {
    const home = tempHome('forget-cli');
    expect(cli(home, 'forget').code).toBe(2);
    expect(cli(home, 'forget', '--before', 'yesterday-ish').code).toBe(2);
    expect(cli(home, 'forget', '--session').code).toBe(2);
    const none = cli(home, 'forget', '--before', '2001-01-01');
    expect(none.code).toBe(3);
    expect(JSON.parse(none.out)).toMatchObject({ ok: false, reason: expect.stringContaining('nothing was forgotten') });
  }, 30_000);
});

describe('recollect.history.exclude', () => {
  it('matches folders at any depth, anchored paths, ~ and braces', () => {
    const g = new ExcludeGlobs(['private-*', '/srv/logs/**', '~/.claude/projects/-home-me-{secret,client}*'], '/home/me');
    expect(g.excludes('/a/b/private-work/x.jsonl')).toBe(true);
    expect(g.excludes('/a/b/public/x.jsonl')).toBe(false);
    expect(g.excludes('/srv/logs/2026/x.json')).toBe(true);
    expect(g.excludes('/home/srv/logs/x.json')).toBe(false);
    expect(g.excludes('/home/me/.claude/projects/-home-me-secret-app/s.jsonl')).toBe(true);
    expect(g.excludes('/home/me/.claude/projects/-home-me-open/s.jsonl')).toBe(false);
    expect(new ExcludeGlobs([]).excludes('/anything')).toBe(false);
  });

  it('keeps an excluded folder from being imported at all', async () => {
    const s = await openTemp();
    const report = await s.importer.importPaths([FIXTURES], undefined, new ExcludeGlobs(['**/claude-code/project-a']));
    expect(report.excluded).toBe(1);
    const files = queryRows(s.store.db, 'SELECT path FROM import_files').map((r) => String(r.path));
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => f.includes('/claude-code/project-a/'))).toEqual([]);
    expect(files.some((f) => f.includes('/claude-code/project-b/'))).toBe(true);
    expect(queryRows(s.store.db, "SELECT count(*) AS n FROM sessions WHERE file LIKE '%/project-a/%'")[0]!.n).toBe(0);
    s.store.close();
  });
});

describe('tool-output retention', () => {
  it('cuts at a UTC midnight per distinct number of days, per source', () => {
    const now = Date.parse('2026-03-10T15:00:00Z');
    expect(retentionCuts({ claudeCode: 7, codex: 7, vscode: 0, copilotCli: 30 }, now)).toEqual([
      { before: Date.parse('2026-03-03T00:00:00Z'), sources: ['claude-code', 'codex'] },
      { before: Date.parse('2026-02-08T00:00:00Z'), sources: ['copilot-cli'] },
    ]);
    expect(retentionCuts({}, now)).toEqual([]);
  });

  it('drops old raw tool outputs from the store, its blobs and its journal; their summaries and events stay, and a re-import does not restore them', async () => {
    const home = tempHome('retention');
    const s = await openTemp(home);
    await s.importer.importPaths([FIXTURES]);
    await s.lcm.buildAll();
    const source = 'claude-code';
    const outputs = queryRows(s.store.db, `SELECT e.id, e.text, e.blob, e.created_at FROM events e JOIN sessions x ON x.id = e.session_id WHERE x.source = ? AND e.kind = 'tool_result' AND e.created_at IS NOT NULL ORDER BY e.created_at`, [source]);
    expect(outputs.length).toBeGreaterThan(10);
    const cut = Number(outputs[Math.floor(outputs.length / 2)]!.created_at);
    const old = outputs.filter((o) => Number(o.created_at) < cut);
    const marker = old.map((o) => String(o.text)).find((t) => /[a-z]{6,}\s+[a-z]{6,}\s+[a-z]{6,}/i.test(t) && !outputs.some((x) => Number(x.created_at) >= cut && String(x.text).includes(t.slice(0, 60))))!;
    const phrase = marker.match(/[a-z]{6,}\s+[a-z]{6,}\s+[a-z]{6,}/i)![0];
    const summaries = Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM lcm_summaries')[0]!.n);
    const events = Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM events')[0]!.n);
    const oldBlobs = old.filter((o) => o.blob !== null).map((o) => String(o.blob));

    const report = await s.forget.dropToolOutputs(cut, [source]);
    expect(report).toMatchObject({ ok: true, outputs: old.filter((o) => o.text !== '' || o.blob !== null).length, warnings: [] });
    expect(queryRows(s.store.db, `SELECT count(*) AS n FROM events WHERE id IN (${old.map((o) => Number(o.id)).join(',')}) AND (text != '' OR blob IS NOT NULL)`)[0]!.n).toBe(0);
    expect(Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM events')[0]!.n)).toBe(events);
    expect(Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM lcm_summaries')[0]!.n)).toBe(summaries);
    expect(journalText(home)).not.toContain(marker.slice(0, 200));
    for (const h of oldBlobs) {
      const stillNamed = queryRows(s.store.db, 'SELECT 1 FROM events WHERE blob = ?1 UNION SELECT 1 FROM lcm_files WHERE blob = ?1', [h]).length > 0;
      expect(s.store.blobs.has(h)).toBe(stillNamed);
    }
    const search = await s.history.search({ query: phrase, limit: 50 });
    expect(JSON.stringify(search)).not.toContain(marker.slice(0, 80));

    // The same files again (touched, so they are read): the hashes match, nothing comes back.
    const copy = tempHome('retention-src');
    fs.cpSync(FIXTURES, copy, { recursive: true });
    const again = await s.importer.importPaths([copy]);
    expect(again.events).toBe(0);
    expect(queryRows(s.store.db, `SELECT count(*) AS n FROM events WHERE id IN (${old.map((o) => Number(o.id)).join(',')}) AND (text != '' OR blob IS NOT NULL)`)[0]!.n).toBe(0);
    // Nothing left to drop: no operation at all.
    expect((await s.forget.dropToolOutputs(cut, [source])).outputs).toBe(0);
    s.store.close();

    fs.rmSync(path.join(home, 'store.sqlite'));
    const rebuilt = await openTemp(home);
    expect(rebuilt.store.journalProblems).toBe(0);
    expect(Number(queryRows(rebuilt.store.db, 'SELECT count(*) AS n FROM events')[0]!.n)).toBe(events);
    expect(queryRows(rebuilt.store.db, `SELECT count(*) AS n FROM events WHERE id IN (${old.map((o) => Number(o.id)).join(',')}) AND (text != '' OR blob IS NOT NULL)`)[0]!.n).toBe(0);
    rebuilt.store.close();
  }, 60_000);
});
