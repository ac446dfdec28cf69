import * as fs from 'node:fs';
/**
 * How much memory one Recollect process may use (RSS), and how the store shares it out. The
 * budget covers the whole process; the store controls three parts of it, each a fixed share so
 * that their sum leaves room for what it does not control (Node itself, sql.js's compiled wasm,
 * the JS heap of a request, an embedding model where semantic recall is on):
 * - the snapshot chunks held decompressed (pagedContents.ts): clean ones are evicted, least
 *   recently used first, and the read-ahead stops while the cache is full;
 * - bytes written since the last checkpoint that only memory holds: evicted chunks go to the
 *   spill file (chunkSpill.ts), and only when it cannot be written does the store checkpoint past
 *   this share, after which they are clean chunks like the others;
 * - SQLite's own page cache, inside sql.js's wasm heap.
 */
export interface MemoryBudget {
  /** The whole process's budget, bytes. */
  budgetBytes: number;
  /** Decompressed snapshot chunks held at once (clean and dirty together). */
  chunkCacheBytes: number;
  /** Written-but-unsaved bytes held in memory that make the store checkpoint when the spill file cannot take them. */
  dirtyBytes: number;
  /** SQLite's page cache (PRAGMA cache_size, in KiB when negative). */
  sqliteCacheBytes: number;
  /** Where the figure came from. */
  source: 'environment' | 'setting' | 'default';
  /** Memory other parts of the process declared they hold (`reserving`), taken out of the chunk cache's share, bytes. */
  reservedBytes: number;
}

export const DEFAULT_BUDGET_MB = 512;
/** Below this a process cannot even hold Node and sql.js with room for one query. */
export const MIN_BUDGET_MB = 64;
export const BUDGET_ENV = 'RECOLLECT_MEMORY_BUDGET_MB';

/**
 * The environment of a Recollect process this project starts itself (a compaction child, the MCP
 * server a client is told to start): glibc's malloc then maps every block over 128 KB on its own
 * and returns it when freed, instead of raising that threshold as blocks come and go and keeping
 * freed memory resident in its heaps (docs/performance.md, MALLOCMEM). It must be set before the
 * process starts; other C libraries ignore it.
 */
export const RETURNING_MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: String(128 * 1024) };

const CHUNK_CACHE_SHARE = 0.3;
const DIRTY_SHARE = 0.125;
const SQLITE_CACHE_SHARE = 0.05;
/** More page cache than this stopped paying off in the bench's searches (sqlite.ts). */
const SQLITE_CACHE_MAX = 64 * 1024 * 1024;

const MB = 1024 * 1024;
/**
 * The chunk cache never goes below this, whatever is reserved: a query reads a few chunks at a
 * time (the B-tree's path, an FTS doclist) and a cache smaller than that reloads on every page.
 */
export const MIN_CHUNK_CACHE = 32 * MB;

/**
 * The budget from `RECOLLECT_MEMORY_BUDGET_MB`, else the `recollect.memory.budgetMb` setting
 * (the extension passes it), else 512 MB; a figure that is not a number is ignored, one below
 * 64 MB is raised to it.
 */
export function memoryBudget(settingMb?: number, env: NodeJS.ProcessEnv = process.env): MemoryBudget {
  const fromEnv = Number(env[BUDGET_ENV]);
  const [mb, source]: [number, MemoryBudget['source']] =
    env[BUDGET_ENV] && Number.isFinite(fromEnv) && fromEnv > 0 ? [fromEnv, 'environment'] : settingMb !== undefined && Number.isFinite(settingMb) && settingMb > 0 ? [settingMb, 'setting'] : [DEFAULT_BUDGET_MB, 'default'];
  const budgetBytes = Math.max(MIN_BUDGET_MB, mb) * MB;
  return {
    budgetBytes,
    chunkCacheBytes: Math.floor(budgetBytes * CHUNK_CACHE_SHARE),
    dirtyBytes: Math.floor(budgetBytes * DIRTY_SHARE),
    sqliteCacheBytes: Math.min(SQLITE_CACHE_MAX, Math.floor(budgetBytes * SQLITE_CACHE_SHARE)),
    source,
    reservedBytes: 0,
  };
}

/**
 * `budget` with `reservedBytes` held elsewhere in the process (the bundled embedding model's
 * thread, the vectors kept for ranking): the chunk cache, the one part that can give memory
 * back at once (clean chunks are dropped and read again), gives up as much, down to
 * MIN_CHUNK_CACHE (or its own share, when a small budget gives it less: a reservation never
 * grows the cache). The other shares stay: unsaved chunks leave only through a checkpoint, and
 * a smaller share would make every few writes one.
 */
export function reserving(budget: MemoryBudget, reservedBytes: number): MemoryBudget {
  const share = Math.floor(budget.budgetBytes * CHUNK_CACHE_SHARE);
  const reserved = Math.max(0, Math.round(reservedBytes));
  return { ...budget, reservedBytes: reserved, chunkCacheBytes: Math.max(Math.min(share, MIN_CHUNK_CACHE), share - reserved) };
}

/**
 * The budget as the parts of a process reserve memory out of it (`reserving`), for the store
 * that owns the process's chunk cache; `onCache` hands the cache its new limit.
 */
export class BudgetShares {
  private now: MemoryBudget;
  /** What each part holds, for memory_status. */
  readonly reserved = new Map<string, number>();

  constructor(
    budget: MemoryBudget,
    private readonly onCache: (bytes: number) => void,
  ) {
    this.now = budget;
  }

  get budget(): MemoryBudget {
    return this.now;
  }

  reserve(part: string, bytes: number): void {
    if (bytes > 0) this.reserved.set(part, bytes);
    else this.reserved.delete(part);
    this.now = reserving(this.now, [...this.reserved.values()].reduce((a, b) => a + b, 0));
    this.onCache(this.now.chunkCacheBytes);
  }

  /**
   * sql.js's wasm heap, `heapBytes` now (sqlite.ts `sqliteHeapBytes`), past what the budget's room
   * for the parts it does not control already holds: the heap it starts with (about 22 MB),
   * SQLite's page cache and a few MB of statements. The heap never shrinks, and a large write's
   * in-memory rollback journal or an FTS4 merge's doclists grow it for good, so what is past that
   * is reserved like any other part's memory.
   */
  countSqliteHeap(heapBytes: number): void {
    const over = Math.max(0, heapBytes - SQLITE_HEAP_BASE - this.now.sqliteCacheBytes);
    if (over !== (this.reserved.get('sqlite_heap') ?? 0)) this.reserve('sqlite_heap', over);
  }
}

const SQLITE_HEAP_BASE = 32 * MB;

/**
 * This process's resident memory now and at its peak, bytes. The peak is Linux's VmHWM where
 * it can be read: the kernel's maxRSS outlives exec, so a child started by a larger process
 * (a compaction child, a CLI run from the extension host) would report its parent's peak.
 * Elsewhere maxRSS is the only peak there is.
 */
export function processMemory(): { rss: number; peakRss: number } {
  const rss = process.memoryUsage.rss();
  return { rss, peakRss: Math.max(rss, highWaterMark() ?? process.resourceUsage().maxRSS * 1024) };
}

function highWaterMark(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
