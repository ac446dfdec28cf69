import * as path from 'node:path';
import { openServices, type Services } from '../src/core/services';
import { readSnapshot } from '../src/core/store/snapshot';
import { queryRows } from '../src/core/store/sqlite';
import { searchFts } from '../src/core/search/ftsSearch';
import { MEMORY_FTS } from '../src/core/memory/memorySchema';
import { VaultService } from '../src/core/memory/vault/vaultService';
import { nowMs } from './stats';

/** Which b-tree (table or index, by name) each page of a database belongs to, walked from sqlite_master's root pages. */
export function pageOwners(bytes: Uint8Array, roots: { name: string; rootpage: number }[]): { pageSize: number; owner: Map<number, string> } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const raw = view.getUint16(16);
  const pageSize = raw === 1 ? 65536 : raw;
  const owner = new Map<number, string>();
  for (const { name, rootpage } of [{ name: 'sqlite_master', rootpage: 1 }, ...roots]) {
    const stack = [rootpage];
    while (stack.length) {
      const page = stack.pop() as number;
      if (page < 1 || owner.has(page) || page * pageSize > bytes.byteLength) continue;
      owner.set(page, name);
      const at = (page - 1) * pageSize + (page === 1 ? 100 : 0);
      const type = bytes[at];
      if (type !== 0x02 && type !== 0x05) continue; // leaves (and overflow pages, left unnamed) have no children
      const cells = view.getUint16(at + 3);
      stack.push(view.getUint32(at + 8));
      for (let c = 0; c < cells; c++) stack.push(view.getUint32((page - 1) * pageSize + view.getUint16(at + 12 + 2 * c)));
    }
  }
  return { pageSize, owner };
}

interface PagedInternals {
  dbFile: { paged?: { chunks: (Buffer | undefined)[]; chunkBytes: number } };
}

function loadedChunkIndexes(s: Services): number[] {
  const paged = (s.store as unknown as PagedInternals).dbFile.paged;
  const out: number[] = [];
  paged?.chunks.forEach((c, i) => c && out.push(i));
  return out;
}

/**
 * `--child open-diag <home> <query>`: opens without read-ahead, then runs the first search_text's
 * parts one by one (the scorer alone, then the whole call with its excerpts and the vault's
 * staleness check), and says which chunks each part pulled in and which b-trees fill them.
 */
export async function coldOpenDiag(home: string, query: string, wasmPath: string): Promise<Record<string, unknown>> {
  const t0 = nowMs();
  const s = await openServices({ home, wasmPath, readAhead: false, autoCompact: false });
  // Warm figures below need every chunk: read-ahead is off for the first query's chunk count only.
  const steps: { step: string; ms: number; chunks: number[] }[] = [];
  let seen = new Set(loadedChunkIndexes(s));
  steps.push({ step: 'open', ms: nowMs() - t0, chunks: [...seen] });
  const step = (name: string, run: () => unknown) => {
    const t = nowMs();
    run();
    const ms = nowMs() - t;
    const now = loadedChunkIndexes(s);
    steps.push({ step: name, ms, chunks: now.filter((c) => !seen.has(c)) });
    seen = new Set(now);
  };
  // A second monitor over the same store does what search_text's first staleness check does.
  step('vault staleness check', () => new VaultService(s.store).index());
  step('searchFts memory_fts (relevance, top 20)', () => searchFts(s.store.db, MEMORY_FTS, { query, limit: 20, now: s.store.now, columns: ['body', 'ref', 'scope'] }));
  step('rest of search_text (excerpts, note chunks)', () => s.memory.searchText({ query, top_k: 20 }));
  step('second search_text', () => s.memory.searchText({ query, top_k: 20 }));
  // Warm: every chunk loaded, so what remains is the query's own work over this file's layout
  // (after FTS4 optimize a term's doclist is one segment instead of many).
  const warm: Record<string, number> = {};
  for (const q of [query, 'build', 'config error', 'session']) {
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t = nowMs();
      s.memory.searchText({ query: q, top_k: 20 });
      times.push(nowMs() - t);
    }
    warm[q] = times.sort((a, b) => a - b)[7] ?? NaN;
  }
  const chunkBytes = s.store.fileStats.chunkBytes;
  const roots = queryRows(s.store.db, "SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0").map((r) => ({ name: String(r.name), rootpage: Number(r.rootpage) }));
  s.store.close();
  const bytes = readSnapshot(path.join(home, 'store.sqlite')) ?? new Uint8Array();
  const { pageSize, owner } = pageOwners(bytes, roots);
  const perChunk = chunkBytes / pageSize;
  const describe = (chunk: number) => {
    const counts = new Map<string, number>();
    for (let p = chunk * perChunk + 1; p <= (chunk + 1) * perChunk; p++) {
      const o = owner.get(p) ?? '(overflow/free)';
      counts.set(o, (counts.get(o) ?? 0) + 1);
    }
    return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([n, c]) => `${n}:${c}`).join(' ');
  };
  return { warmSearchTextP50: warm, steps: steps.map((st) => ({ ...st, owners: st.chunks.map((c) => `${c} ${describe(c)}`) })) };
}
