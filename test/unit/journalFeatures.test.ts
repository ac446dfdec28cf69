import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseOperation } from '../../src/core/store/journal';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

const journalOf = (home: string) => path.join(home, 'journal.jsonl');

function importLines(home: string): number[] {
  return fs
    .readFileSync(journalOf(home), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => parseOperation(l))
    .flatMap((o) => (typeof o === 'string' ? [] : o.op === 'history.files.imported' ? [(o as unknown as { files: unknown[] }).files.length] : o.op === 'history.file.imported' ? [1] : []));
}

/** Another process holding the journal open for appending, as every process that shares the store does. */
async function holder(home: string) {
  const child = spawn(process.execPath, ['-e', `require('fs').openSync(${JSON.stringify(journalOf(home))}, 'a'); console.log('held'); setInterval(() => {}, 1000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return {
    async exit() {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

describe('journal lines and other processes', () => {
  it('an import writes batch lines whoever else holds the journal, and no marker files exist beside it', async () => {
    const home = tempHome('features-import');
    const s = await openTemp(home);
    await s.memory.remember({ statement: 'the journal exists before the other process opens it' }, 'test');
    const other = await holder(home);
    try {
      const first = await s.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
      expect(first.files).toBeGreaterThan(1);
      expect(Math.max(...importLines(home))).toBeGreaterThan(1);
    } finally {
      await other.exit();
    }
    expect(fs.readdirSync(home).filter((f) => f === 'journal.follows-seals' || f === 'journal.reads-import-batches')).toEqual([]);
    s.store.close();
  });

  it('a process that skipped an operation of a newer build writes no checkpoint past it, so the newer build still finds it', async () => {
    const home = tempHome('features-unknown');
    const a = await openTemp(home);
    await a.memory.remember({ statement: 'before the newer line' }, 'test');
    a.store.checkpoint();
    const snapshot = fs.readFileSync(path.join(home, 'store.sqlite'));
    fs.appendFileSync(journalOf(home), `${JSON.stringify({ op: 'memory.future.thing', at: 5, x: 1 })}\n`);
    await a.memory.remember({ statement: 'after the newer line' }, 'test');
    expect(a.store.journalProblems).toBe(1);
    expect(a.store.warnings).toContainEqual(expect.stringContaining('writes no checkpoint from now on'));
    a.store.checkpoint();
    a.store.close();
    expect(fs.readFileSync(path.join(home, 'store.sqlite')).equals(snapshot)).toBe(true);
    // Both notes are still there for the next process, which replays the tail again.
    const b = await openTemp(home);
    expect(b.memory.status().entries).toBe(2);
    expect(b.store.journalProblems).toBe(1);
    b.store.close();
  });
});
