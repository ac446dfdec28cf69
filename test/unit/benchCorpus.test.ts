import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, test } from 'vitest';
import { replicateTranscripts } from '../../bench/transcripts';
import { Rng } from '../../bench/rng';
import { openTemp, tempHome } from './helpers/tempStore';
import { transcriptFixtures } from './helpers/fixtures';

const WORD = /[A-Za-z]{3,}/g;

function wordsOf(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else for (const w of fs.readFileSync(p, 'utf8').match(WORD) ?? []) out.add(w);
    }
  };
  walk(dir);
  return out;
}

test('the bench corpus varies the words of each copy, yet every copy imports to the same sessions, runs and events as the fixtures', async () => {
  const root = tempHome('corpus');
  const raw = replicateTranscripts(transcriptFixtures(), root, 1, new Rng(11));
  const three = replicateTranscripts(transcriptFixtures(), path.join(root, 'three'), raw.fixtureBytes * 3, new Rng(11));
  expect(three.copyDirs).toHaveLength(3);
  const [first, second, third] = three.copyDirs as [string, string, string];
  // Later copies bring words the first never had: the archive's vocabulary grows.
  const base = wordsOf(first);
  const fresh = [...wordsOf(second)].filter((w) => !base.has(w));
  expect(fresh.length).toBeGreaterThan(300);

  const counts = [];
  for (const dir of [first, second, third]) {
    const s = await openTemp();
    try {
      const r = await s.importer.importPaths([dir]);
      counts.push({ sessions: r.sessions, runs: r.runs, events: r.events, skipped: r.skipped_lines, problems: r.problems.length });
    } finally {
      s.store.close();
    }
  }
  expect(counts[0]?.events).toBeGreaterThan(100);
  expect(counts[1]).toEqual(counts[0]);
  expect(counts[2]).toEqual(counts[0]);
}, 120_000);
