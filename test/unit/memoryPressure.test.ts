import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replicateTranscripts } from '../../bench/transcripts';
import { Rng } from '../../bench/rng';
import { openServices, type Services } from '../../src/core/services';
import { memoryBudget } from '../../src/core/store/memoryBudget';
import { transcriptFixtures } from './helpers/fixtures';
import { tempHome, WASM_PATH } from './helpers/tempStore';

/**
 * Issue 18: chunks written since the last checkpoint leave memory through the spill file
 * (chunkSpill.ts) once they fill their share of the budget, with no checkpoint on the way.
 */

const NOW = Date.parse('2026-06-01T12:00:00Z');
const open = (home: string, memoryBudgetMb?: number) => openServices({ home, wasmPath: WASM_PATH, now: () => NOW, autoCompact: false, ...(memoryBudgetMb ? { memoryBudgetMb } : {}) });

function picture(s: Services) {
  return {
    counts: s.history.counts(),
    searches: ['error', 'test file', 'sleep'].map((query) => s.history.search({ query, limit: 20 })),
    integrity: s.store.db.exec('PRAGMA integrity_check')[0]?.values[0]?.[0],
  };
}

describe('checkpoints under memory pressure', () => {
  it('an import past the unsaved share spills written chunks instead of checkpointing, holds no more than the share unsaved, and ends as an unbounded import does', async () => {
    const transcripts = tempHome('pressure-transcripts');
    // Enough transcripts that the chunks they write pass the unsaved share (8 MB of a 64 MB
    // budget) well before the end: 24 MB stopped doing so once history_fts stopped keeping a
    // second copy of the events' texts (the store it makes is smaller).
    replicateTranscripts(transcriptFixtures(), transcripts, 32 * 1024 * 1024, new Rng(3));
    const tight = tempHome('pressure-tight');
    const loose = tempHome('pressure-loose');
    const a = await open(tight, 64);
    const b = await open(loose);
    await a.importer.importPaths([transcripts]);
    await b.importer.importPaths([transcripts]);
    const memory = a.memory.status().memory;
    expect(memory.cache.spills).toBeGreaterThan(0);
    expect(memory.cache.pressure_checkpoints).toBe(0);
    expect(b.memory.status().memory.cache.spills).toBe(0);
    // One import line (up to 16 files) is applied whole, so the share can be passed by at most that line's pages.
    expect(memory.cache.unsaved_mb * 1024 * 1024).toBeLessThan(memoryBudget(64).dirtyBytes + 24 * 1024 * 1024);
    const expected = picture(b);
    expect(picture(a)).toEqual(expected);
    // The spill file is this process's alone: nothing of it is a snapshot, and it goes at close.
    expect(fs.existsSync(path.join(tight, 'store.sqlite'))).toBe(false);
    const spills = () => fs.readdirSync(tight).filter((n) => n.startsWith(`store.sqlite.tmp-${process.pid}-`));
    expect(spills().length).toBe(1);
    a.store.close();
    b.store.close();
    expect(spills()).toEqual([]);
    const again = await open(tight, 64);
    expect(picture(again)).toEqual(expected);
    again.store.close();
  }, 120_000);
});
