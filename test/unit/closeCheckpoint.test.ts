import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openServices } from '../../src/core/services';
import { readSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryScalar } from '../../src/core/store/sqlite';
import { OFFSET_KEY } from '../../src/core/store/storeOpen';
import { tempHome, WASM_PATH } from './helpers/tempStore';

/** The journal offset the snapshot on disk covers. */
async function coveredOffset(home: string): Promise<number> {
  const bytes = readSnapshot(path.join(home, 'store.sqlite'));
  if (!bytes) return -1;
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database(bytes);
  try {
    return Number(queryScalar(db, 'SELECT value FROM meta WHERE key = ?', [OFFSET_KEY]));
  } finally {
    db.close();
  }
}

const journalBytes = (home: string) => fs.statSync(path.join(home, 'journal.jsonl')).size;

describe('close() and a journal tail that was slow to replay', () => {
  it('writes a checkpoint when replaying the tail took this process at least closeCheckpointReplayMs, and not for its own writes or below it', async () => {
    const home = tempHome('close-checkpoint');
    const writer = await openServices({ home, wasmPath: WASM_PATH, autoCompact: false });
    await writer.memory.remember({ statement: 'the first note' }, 'vitest');
    writer.store.checkpoint();
    const start = await coveredOffset(home);
    expect(start).toBe(journalBytes(home));
    for (let i = 0; i < 40; i++) await writer.memory.remember({ statement: `note ${i} about the release cache` }, 'vitest');
    writer.store.close(); // its own lines, far below the byte bound: no checkpoint
    expect(await coveredOffset(home)).toBe(start);
    expect(journalBytes(home)).toBeGreaterThan(start);

    // Another process replays the 40 lines; below its bound it leaves the snapshot as it was.
    const patient = await openServices({ home, wasmPath: WASM_PATH, autoCompact: false, closeCheckpointReplayMs: 60_000 });
    patient.store.close();
    expect(await coveredOffset(home)).toBe(start);

    // With a bound its replay reaches, the next process to open finds the tail covered.
    const hasty = await openServices({ home, wasmPath: WASM_PATH, autoCompact: false, closeCheckpointReplayMs: 0 });
    hasty.store.close();
    expect(await coveredOffset(home)).toBe(journalBytes(home));

    // Nothing left to replay: closing again writes nothing, whatever the bound.
    const mtime = fs.statSync(path.join(home, 'store.sqlite')).mtimeMs;
    const again = await openServices({ home, wasmPath: WASM_PATH, autoCompact: false, closeCheckpointReplayMs: 0 });
    again.store.close();
    expect(fs.statSync(path.join(home, 'store.sqlite')).mtimeMs).toBe(mtime);
  });
});
