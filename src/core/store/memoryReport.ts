import type { DatabaseFile } from './databaseFile';
import { processMemory, type MemoryBudget } from './memoryBudget';

const MB = 1024 * 1024;
const mb = (n: number) => Math.round((n / MB) * 10) / 10;

/**
 * memory_status's `memory`: the budget, this process's resident memory now and at its peak,
 * and what the snapshot cache holds. `compactionSkipped` says why the last compaction due was
 * not run (it would not fit the budget); `reserved` what other parts of the process hold of the
 * budget (memoryBudget.ts `reserving`).
 */
export function memoryReport(budget: MemoryBudget, dbFile: DatabaseFile, pressureCheckpoints: number, compactionSkipped: string | undefined, reserved: ReadonlyMap<string, number>) {
  const { rss, peakRss } = processMemory();
  const usage = process.memoryUsage();
  const cache = dbFile.cache;
  const chunk = dbFile.stats.chunkBytes || 0;
  return {
    budget_mb: mb(budget.budgetBytes),
    budget_source: budget.source,
    rss_mb: mb(rss),
    peak_rss_mb: mb(peakRss),
    // Of the RSS: the JS heap, and the memory of buffers outside it (the chunk cache among them; sql.js's wasm heap is one of them).
    js_heap_mb: mb(usage.heapUsed),
    buffers_mb: mb(usage.arrayBuffers),
    cache: {
      limit_mb: mb(budget.chunkCacheBytes),
      held_mb: mb(cache?.loadedBytes ?? 0),
      // Written since the last checkpoint and held only in memory; `spills` counts chunks written to the spill file so they could leave it (chunkSpill.ts).
      unsaved_mb: mb(cache ? cache.unsavedChunks * chunk : 0),
      spills: cache?.spillWrites ?? 0,
      spill_file_mb: mb(cache?.spillFileBytes ?? 0),
      // Uncompressed copies of chunks the cache dropped (chunkCopies.ts): disk, not memory; `copy_reloads` of the reloads read one instead of decompressing, `copy_page_reads` pages read from one without reloading its chunk.
      copies_mb: mb(cache ? cache.copiedChunks * chunk : 0),
      copy_reloads: cache?.copyReads ?? 0,
      copy_page_reads: cache?.copyPageReads ?? 0,
      evictions: cache?.evictions ?? 0,
      reloads: cache?.reloads ?? 0,
      pressure_checkpoints: pressureCheckpoints,
    },
    sqlite_cache_mb: mb(budget.sqliteCacheBytes),
    ...(reserved.size ? { reserved_mb: Object.fromEntries([...reserved].map(([part, bytes]) => [part, mb(bytes)])) } : {}),
    ...(compactionSkipped ? { compaction: compactionSkipped } : {}),
  };
}
