import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { HOT_CHUNKS_FILE } from '../../../src/core/store/hotChunks';
import { encodePagedSync } from '../../../src/core/store/pagedFrame';
import { readSnapshot } from '../../../src/core/store/snapshot';
import { queryRows } from '../../../src/core/store/sqlite';
import type { Services } from '../../../src/core/services';
import { openTemp, tempHome } from './tempStore';

/**
 * A closed store of `notes` remembered notes whose snapshot is cut into chunks of `chunkBytes`
 * (small, so a few notes span many chunks), with no read-order hint yet; `rows` are its notes
 * as written, for comparing with what a later open reads.
 */
export async function pagedStore(prefix: string, notes: number, chunkBytes: number): Promise<{ home: string; file: string; rows: Record<string, unknown>[]; chunks: number }> {
  const home = tempHome(prefix);
  const s = await openTemp(home);
  for (let i = 0; i < notes; i++) await s.memory.remember({ statement: `${prefix} note ${i}: ${'a query reads some pages before the others while the rest are decompressed '.repeat(3)}` }, 'test');
  s.store.checkpoint();
  const rows = queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid');
  s.store.close();
  const file = path.join(home, 'store.sqlite');
  const database = readSnapshot(file);
  if (!database) throw new Error('no snapshot written');
  fs.writeFileSync(file, Buffer.concat(encodePagedSync(database, chunkBytes)));
  fs.rmSync(path.join(home, HOT_CHUNKS_FILE), { force: true });
  return { home, file, rows, chunks: Math.ceil(database.length / chunkBytes) };
}

/**
 * After an open of `home` whose snapshot has a damaged chunk past the first: the store warns of
 * the chunk `chunk` names (a regular-expression fragment: a number, or \\d+ for any), sets the file aside once and rebuilds `rows` from the journal
 * (both happen in the background, after the query that met the damage).
 */
export async function expectRebuiltAfterDamage(s: Services, home: string, rows: Record<string, unknown>[], chunk: string): Promise<void> {
  await expect.poll(() => s.store.warnings.join('\n'), { timeout: 10_000 }).toMatch(new RegExp(`damaged: the checksum does not match \\(chunk ${chunk}\\)`));
  await expect.poll(() => {
    try {
      return queryRows(s.store.db, 'SELECT * FROM notes ORDER BY rowid');
    } catch {
      return [];
    }
  }, { timeout: 10_000 }).toEqual(rows);
  expect(fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-'))).toHaveLength(1);
}
