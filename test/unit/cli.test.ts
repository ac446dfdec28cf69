import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers/mcpClient';
import { tempHome } from './helpers/tempStore';
import { transcriptFixtures } from './helpers/fixtures';
import { relaunchesForMalloc } from '../../src/cli/mallocRelaunch';

function cli(home: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('recollect CLI', () => {
  it('exits 0 when the tool answered and prints its JSON; a later process sees the write', () => {
    const home = tempHome('cli');
    const saved = cli(home, 'tool', 'save_memory', JSON.stringify({ subject: 'ci', predicate: 'runs', object: '.ci/run' }));
    expect(saved.code).toBe(0);
    expect(JSON.parse(saved.out)).toMatchObject({ ok: true, source: 'cli' });
    const read = cli(home, 'tool', 'retrieve_memory', '{"subject":"CI"}');
    expect(read.code).toBe(0);
    expect(JSON.parse(read.out).values[0].object).toBe('.ci/run');
  });

  it('exits 3 when the tool refused, with the refusal as JSON', () => {
    const r = cli(tempHome('cli'), 'tool', 'remember', JSON.stringify({ statement: 'z'.repeat(4001) }));
    expect(r.code).toBe(3);
    expect(JSON.parse(r.out)).toMatchObject({ ok: false, budget: { limit: 4000, used: 4001 } });
    expect(cli(tempHome('cli'), 'tool', 'remember', '{not json').code).toBe(3);
  });

  it('exits 1 when the store cannot open and says why on stderr in a sentence, not an error code', () => {
    const file = path.join(tempHome('cli'), 'not-a-folder');
    fs.writeFileSync(file, 'x');
    const r = cli(file, 'tool', 'memory_status', '{}');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`recollect: the store path ${file} is a file, not a folder: point RECOLLECT_HOME`);
    const under = cli(path.join(file, 'store'), 'tool', 'memory_status', '{}');
    expect(under.code).toBe(1);
    expect(under.err).toContain(`recollect: the store path ${path.join(file, 'store')} lies under ${file}, which is a file, not a folder`);
    expect(r.err + under.err).not.toMatch(/EEXIST|ENOTDIR/);
  });

  it('exits 2 on an unknown tool', () => {
    expect(cli(tempHome('cli'), 'tool', 'nope', '{}').code).toBe(2);
  });

  it('`recollect activity` shows the calls of every process on the store, newest first, without entering the journal', () => {
    const home = tempHome('cli');
    expect(cli(home, 'tool', 'search_text', '{"query":"kestrels"}').code).toBe(0);
    const journal = fs.readFileSync(path.join(home, 'journal.jsonl'));
    expect(cli(home, 'tool', 'chat_history', '{"mode":"read"}').code).toBe(3);
    expect(fs.readFileSync(path.join(home, 'journal.jsonl')).equals(journal)).toBe(true);
    const json = cli(home, 'activity', '--json');
    expect(json.code).toBe(0);
    const page = JSON.parse(json.out) as { rows: { client: string; tool: string; ok: boolean; input: string }[]; unreadable: number };
    expect(page.rows.map((r) => [r.client, r.tool, r.ok])).toEqual([['cli', 'chat_history', false], ['cli', 'search_text', true]]);
    expect(page.rows[1]!.input).toBe('{"query":"kestrels"}');
    const text = cli(home, 'activity', '--limit', '1');
    expect(text.out).toMatch(/1 of 2 shown/);
    expect(text.out).toMatch(/cli\s+chat_history\s+refused .*needs a task_id/);
    expect(cli(home, 'activity', '--limit', 'x').code).toBe(2);
  });

  it('on Linux runs `import` again in a child with the malloc setting, which does the import, and passes on its exit code', () => {
    expect(relaunchesForMalloc('import', 'linux', {})).toBe(true);
    expect(relaunchesForMalloc('import', 'linux', { MALLOC_MMAP_THRESHOLD_: '65536' })).toBe(false);
    expect(relaunchesForMalloc('import', 'darwin', {})).toBe(false);
    expect(relaunchesForMalloc('mcp', 'linux', {})).toBe(false);
    if (process.platform !== 'linux') return;
    const home = tempHome('cli');
    const folder = path.join(home, 'transcripts');
    fs.mkdirSync(folder);
    const one = path.join(transcriptFixtures(), 'claude-code', 'project-b', '1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl');
    fs.copyFileSync(one, path.join(folder, path.basename(one)));
    // Every Node process of the command records its pid and the variable as it started.
    const seen = path.join(home, 'seen.txt');
    const probe = path.join(home, 'probe.js');
    fs.writeFileSync(probe, `require('fs').appendFileSync(${JSON.stringify(seen)}, process.pid + ' ' + (process.env.MALLOC_MMAP_THRESHOLD_ ?? '-') + '\\n');\n`);
    const env: NodeJS.ProcessEnv = { ...process.env, RECOLLECT_HOME: home, NODE_OPTIONS: `--require ${probe}` };
    delete env.MALLOC_MMAP_THRESHOLD_;
    const r = spawnSync(process.execPath, [CLI, 'import', folder], { env, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ files: 1 });
    // One line per process (worker threads share their process's pid): the waiting parent, then the child.
    const byPid = new Map(fs.readFileSync(seen, 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string]));
    expect([...byPid.values()]).toEqual(['-', '131072']);
    const usage = spawnSync(process.execPath, [CLI, 'import'], { env, encoding: 'utf8' });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('usage: recollect import');
  });
});
