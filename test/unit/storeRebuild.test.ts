import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

const open: Services[] = [];
async function openStore(home: string): Promise<Services> {
  const s = await openTemp(home);
  open.push(s);
  return s;
}

afterEach(() => {
  for (const s of open.splice(0)) s.store.close();
});

/** Everything a person would notice if the rebuild lost or changed something. */
function picture(s: Services) {
  const search = s.memory.searchText({ query: 'Vite' });
  return {
    status: { ...s.memory.status(), store: undefined, warnings: undefined, memory: undefined },
    history: s.history.counts(),
    retrieve: s.memory.retrieve({ subject: 'build tool', include_history: true }),
    hits: 'hits' in search ? search.hits.map((h) => [h.id, h.text]) : search,
  };
}

describe('rebuilding the index from the journal (Store.rebuild)', () => {
  it('rebuilds facts, notes, history and the search index exactly, and writes a snapshot other processes open', async () => {
    const home = tempHome('rebuild');
    const a = await openStore(home);
    await a.memory.saveFact({ subject: 'build tool', predicate: 'is', object: 'Vite 8' }, 'test');
    await a.memory.remember({ statement: 'We moved to Vite 9', subject: 'build tool', predicate: 'is', object: 'Vite 9' }, 'test');
    await a.memory.remember({ statement: 'Vite config lives in vite.config.mts' }, 'test');
    const report = await a.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
    expect(report.sessions).toBeGreaterThan(0);
    const before = picture(a);

    const snapshot = path.join(home, 'store.sqlite');
    const journalBytes = fs.statSync(path.join(home, 'journal.jsonl')).size;
    const result = await a.store.rebuild();
    expect(result).toEqual({ journalBytes, skippedLines: 0 });
    expect(picture(a)).toEqual(before);
    expect(fs.existsSync(snapshot)).toBe(true);
    // The journal is the source; a rebuild reads it and never writes to it.
    expect(fs.statSync(path.join(home, 'journal.jsonl')).size).toBe(journalBytes);

    const b = await openStore(home);
    expect(picture(b)).toEqual(before);
  });

  it('keeps serving writes from itself and from another process after a rebuild', async () => {
    const home = tempHome('rebuild-live');
    const a = await openStore(home);
    const b = await openStore(home);
    await a.memory.saveFact({ subject: 'deploy day', predicate: 'is', object: 'Friday' }, 'test');
    const [, saved] = await Promise.all([a.store.rebuild(), a.memory.saveFact({ subject: 'deploy day', predicate: 'is', object: 'Monday' }, 'test')]);
    expect(saved.ok).toBe(true);
    await b.memory.saveFact({ subject: 'deploy day', predicate: 'is', object: 'Tuesday' }, 'other');
    const values = a.memory.retrieve({ subject: 'deploy day', include_history: true });
    expect('values' in values && values.values.map((v) => `${v.object}:${v.status}`)).toEqual(['Tuesday:current', 'Monday:historical', 'Friday:historical']);
  });

  it('counts a damaged journal line it cannot apply, and rebuilds the rest', async () => {
    const home = tempHome('rebuild-damaged');
    const a = await openStore(home);
    await a.memory.remember({ statement: 'first' }, 'test');
    fs.appendFileSync(path.join(home, 'journal.jsonl'), '{"op": "memory.note.added", "at": 1, "trunc\n');
    await a.memory.remember({ statement: 'second' }, 'test');
    const result = await a.store.rebuild();
    expect(result.skippedLines).toBe(1);
    expect(a.memory.status().entries).toBe(2);
    expect(a.store.journalProblems).toBe(1);
  });
});
