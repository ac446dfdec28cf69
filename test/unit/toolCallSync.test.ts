import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers/mcpClient';
import { tempHome } from './helpers/tempStore';

/** The fsync-family syscalls one CLI tool call makes, counted by strace on the real process. */
function syncsOf(home: string, tool: string, input: object): string[] {
  const trace = path.join(home, 'strace.txt');
  execFileSync('strace', ['-f', '-qq', '-e', 'trace=fsync,fdatasync', '-o', trace, process.execPath, CLI, 'tool', tool, JSON.stringify(input)], {
    env: { ...process.env, RECOLLECT_HOME: home },
    stdio: 'ignore',
  });
  return fs.readFileSync(trace, 'utf8').split('\n').filter((l) => /\b(fsync|fdatasync)\(/.test(l));
}

describe('fsyncs per tool call (strace on the real CLI)', () => {
  it('a search writes nothing to the journal and syncs nothing, a remember journals its one line with one sync; the activity log has both', () => {
    const home = tempHome('syncs');
    execFileSync(process.execPath, [CLI, 'tool', 'memory_status', '{}'], { env: { ...process.env, RECOLLECT_HOME: home }, stdio: 'ignore' });
    const before = fs.statSync(path.join(home, 'journal.jsonl')).size;

    expect(syncsOf(home, 'search_text', { query: 'vite' })).toEqual([]);
    expect(fs.statSync(path.join(home, 'journal.jsonl')).size).toBe(before);
    // One fdatasync for the journal line the caller is told about (the day file of the vault has its own fsync).
    const remember = syncsOf(home, 'remember', { statement: 'The build uses Vite 8', subject: 'build tool', predicate: 'is', object: 'Vite 8' });
    expect(remember.filter((l) => l.includes('fdatasync('))).toHaveLength(1);

    const added = fs.readFileSync(path.join(home, 'journal.jsonl')).subarray(before).toString('utf8');
    const ops = added.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { op: string }).op);
    expect(ops).toEqual(['memory.fact.remembered']);
    const activity = fs.readFileSync(path.join(home, 'activity.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { tool: string }).tool);
    expect(activity).toEqual(['memory_status', 'search_text', 'remember']);
  });
});
