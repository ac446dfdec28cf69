import { describe, expect, it } from 'vitest';
import { openServices } from '../../src/core/services';
import { memoryBudget, MIN_CHUNK_CACHE } from '../../src/core/store/memoryBudget';
import { sqliteHeapBytes } from '../../src/core/store/sqlite';
import { memoryStatusTool } from '../../src/core/tools/memoryStatus';
import { tempHome, WASM_PATH } from './helpers/tempStore';

/**
 * Issue 18: sql.js's wasm heap grows for good when a statement needs it (a large write's
 * in-memory rollback journal, an FTS4 merge's doclists), so what it grew past the budget's
 * allowance is counted, and the chunk cache gives it up: the process stays within its budget.
 */

const MB = 1024 * 1024;

describe("sql.js's heap in the memory budget", () => {
  it('a transaction that rewrites 60 MB grows the heap; the store reserves the growth and its chunk cache shrinks by as much', async () => {
    const home = tempHome('sqlite-heap');
    const s = await openServices({ home, wasmPath: WASM_PATH, autoCompact: false, readAhead: false });
    try {
      const db = s.store.db;
      db.run('CREATE TABLE bulk (x BLOB)');
      db.run('WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 120000) INSERT INTO bulk SELECT randomblob(500) FROM c');
      const before = sqliteHeapBytes();
      // Every page rewritten in one transaction: the rollback journal (in memory) holds each page's old bytes.
      db.exec('BEGIN');
      db.run('UPDATE bulk SET x = randomblob(500)');
      db.exec('COMMIT');
      const grown = sqliteHeapBytes();
      expect(grown - before).toBeGreaterThan(40 * MB);
      const status = (await memoryStatusTool.run({}, s, { client: 'test', workspace: '/nonexistent' })) as {
        memory: { budget_mb: number; sqlite_cache_mb: number; cache: { limit_mb: number }; reserved_mb?: Record<string, number> };
      };
      const budget = memoryBudget(status.memory.budget_mb);
      const reserved = status.memory.reserved_mb?.sqlite_heap ?? 0;
      const expected = grown - 32 * MB - budget.sqliteCacheBytes;
      expect(Math.abs(reserved * MB - expected)).toBeLessThan(0.1 * MB);
      const others = Object.entries(status.memory.reserved_mb ?? {}).reduce((sum, [part, mb]) => sum + (part === 'sqlite_heap' ? 0 : mb), 0) * MB;
      const limit = Math.max(MIN_CHUNK_CACHE, budget.chunkCacheBytes - others - expected);
      expect(Math.abs(status.memory.cache.limit_mb * MB - limit)).toBeLessThan(0.2 * MB);
      expect(s.store.budget.chunkCacheBytes).toBeLessThan(budget.chunkCacheBytes - others - 20 * MB);
    } finally {
      s.store.close();
    }
  }, 60_000);
});
