import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseOperation } from '../../src/core/store/journal';
import { READER_MARKERS } from '../../src/core/store/journalHolders';
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

/** A process holding the journal open for appending, with the marker files of the features it reads (none: the oldest builds). */
async function holder(home: string, markers: string[]) {
  const files = [journalOf(home), ...markers.map((m) => path.join(home, m))];
  const child = spawn(process.execPath, ['-e', `for (const f of ${JSON.stringify(files)}) require('fs').openSync(f, 'a'); console.log('held'); setInterval(() => {}, 1000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return {
    async exit() {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

describe('journal features an earlier build cannot read', () => {
  it('imports one line per file while a process of an earlier build (it follows seals, not batches) holds the journal, and batches once it exits', async () => {
    const home = tempHome('features-import');
    const s = await openTemp(home);
    await s.memory.remember({ statement: 'the journal exists before the other process opens it' }, 'test');
    const older = await holder(home, [READER_MARKERS.seals]);
    try {
      await new Promise((r) => setTimeout(r, 2_100)); // past the remembered "safe" answer, if any
      const first = await s.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
      expect(first.files).toBeGreaterThan(1);
      expect(importLines(home).every((n) => n === 1)).toBe(true);
    } finally {
      await older.exit();
    }
    const before = importLines(home).length;
    await s.importer.importPaths([transcriptFixtures()]);
    expect(Math.max(...importLines(home).slice(before))).toBeGreaterThan(1);
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
