import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { openServices, type Services } from '../src/core/services';
import type { RememberInput } from '../src/core/memory/memoryService';
import { HOT_CHUNKS_FILE } from '../src/core/store/hotChunks';
import { PagedFrame } from '../src/core/store/pagedFrame';
import { Rng } from './rng';
import { median, nowMs, percentile } from './stats';

/** What agents send to remember: mostly short notes, a quarter facts with the sentence behind them. */
export function rememberInputs(n: number, rng: Rng, statement: () => string, factWords: readonly string[]): RememberInput[] {
  const out: RememberInput[] = [];
  for (let i = 0; i < n; i++) {
    const text = statement();
    if (rng.chance(0.25)) {
      const subject = `${rng.pick(factWords)} ${rng.pick(factWords)}`;
      out.push({ statement: text, subject, predicate: rng.pick(['is', 'uses', 'prefers', 'depends on']), object: `${rng.pick(factWords)} ${rng.int(1, 20)}` });
    } else {
      out.push({ statement: text });
    }
  }
  return out;
}

export interface RememberTimings {
  all: number[];
  notes: number[];
  facts: number[];
  /** Measured calls during which the store decompressed snapshot chunks on the main thread (none read ahead yet), and how many chunks. */
  chunkCalls: number;
  chunkLoads: number;
}

export interface InterleavedRemember {
  floor: number[];
  small: RememberTimings;
  big: RememberTimings;
  emptySmall: number[];
  emptyBig: number[];
}

/**
 * remember on both stores and the bare fsync, one call of each per step in rotating order, so
 * that whatever else the machine is doing lands on all three alike and the ratios hold.
 */
export async function rememberInterleaved(small: Services, big: Services, inputs: RememberInput[], dir: string, warmup: number): Promise<InterleavedRemember> {
  const timings = (): RememberTimings => ({ all: [], notes: [], facts: [], chunkCalls: 0, chunkLoads: 0 });
  const out: InterleavedRemember = { floor: [], small: timings(), big: timings(), emptySmall: [], emptyBig: [] };
  const file = path.join(dir, 'fsync-floor.jsonl');
  const fd = fs.openSync(file, 'a');
  const line = Buffer.from(`${'x'.repeat(399)}\n`);
  const remember = async (s: Services, input: RememberInput, into: RememberTimings, keep: boolean) => {
    const loads = s.store.fileStats.syncLoads;
    const t0 = nowMs();
    const r = await s.memory.remember(input, 'bench');
    const dt = nowMs() - t0;
    if (!r.ok) throw new Error(`remember refused: ${JSON.stringify(r).slice(0, 200)}`);
    if (!keep) return;
    const loaded = s.store.fileStats.syncLoads - loads;
    into.chunkCalls += loaded > 0 ? 1 : 0;
    into.chunkLoads += loaded;
    into.all.push(dt);
    (input.subject !== undefined ? into.facts : into.notes).push(dt);
  };
  const empty = async (s: Services, into: number[], keep: boolean) => {
    const t0 = nowMs();
    await s.store.commit(() => ({ result: 0 }));
    if (keep) into.push(nowMs() - t0);
  };
  try {
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as RememberInput;
      const keep = i >= warmup;
      const steps = [
        async () => {
          const t0 = nowMs();
          fs.writeSync(fd, line);
          fs.fdatasyncSync(fd);
          if (keep) out.floor.push(nowMs() - t0);
        },
        () => remember(small, input, out.small, keep),
        () => remember(big, input, out.big, keep),
      ];
      for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
      // A commit that writes nothing: the lock and the catch-up, without fsync or apply.
      if (i % 3 === 0) {
        await empty(small, out.emptySmall, keep);
        await empty(big, out.emptyBig, keep);
      }
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return out;
}

/**
 * Diagnostic: the same remember calls with fdatasync replaced by a no-op, i.e. everything a
 * remember costs besides waiting for the disk (lock, catch-up, journal write, apply).
 */
export async function rememberWithoutFsync(stores: Services[], inputs: RememberInput[]): Promise<number[][]> {
  // The module object itself (an ES namespace import is read-only); the store calls through it.
  const nodeFs = createRequire(__filename)('node:fs') as { fdatasyncSync: (fd: number) => void };
  const real = nodeFs.fdatasyncSync;
  const out = stores.map(() => [] as number[]);
  nodeFs.fdatasyncSync = () => undefined;
  try {
    for (const input of inputs) {
      for (const [k, s] of stores.entries()) {
        const t0 = nowMs();
        await s.memory.remember(input, 'bench');
        out[k]!.push(nowMs() - t0);
      }
    }
  } finally {
    nodeFs.fdatasyncSync = real;
  }
  return out;
}

export function snapshotSize(home: string): number {
  return fs.statSync(path.join(home, 'store.sqlite')).size;
}

/** One kind of process's cold opens: openServices, the first search_text, both, and the chunks that query decompressed on the main thread. */
export interface ColdOpenRuns {
  open: number[];
  firstQuery: number[];
  openPlusQuery: number[];
  syncQuery: number[];
}

export interface ColdOpen extends ColdOpenRuns {
  secondQuery: number[];
  tokenizerInit: number[];
  wasm: number[];
  read: number[];
  /** Reading a file the size of the database itself (the snapshot is compressed at rest). */
  readPlain: number[];
  childWall: number[];
  /** As `recollect mcp` starts: open with the tokenizer warming meanwhile, until a first token count answers. */
  mcpReady: number[];
  /** Resident memory (bytes) after openServices and after the first query. */
  rssOpen: number[];
  rssQuery: number[];
  /** Snapshot chunks decompressed by then (version 3 snapshots are read on demand), and their size. */
  chunksOpen: number[];
  chunksQuery: number[];
  chunkBytes: number;
  /** The same open as `recollect mcp` (one optimizing recompile thread) and `recollect tool` (baseline compiler only): sqlite.ts setWasmCompilation. */
  server: ColdOpenRuns;
  once: ColdOpenRuns;
}

const noRuns = (): ColdOpenRuns => ({ open: [], firstQuery: [], openPlusQuery: [], syncQuery: [] });

/**
 * Cold open in fresh processes: `node dist/bench.js --child open <home>` times openServices to
 * the end of a first search; `--child read <file>` times fs.readFileSync of the snapshot.
 * Both run on a warm page cache (it cannot be dropped here without root). The open's read-ahead
 * starts with the chunks the previous process's first queries asked for (hotChunks.ts), and a
 * user's next first query is another one: one unmeasured open, searching a word no measured run
 * searches, plays the process that used the store last, and its hint is put back before every
 * measured open, so no run is helped by the rows an earlier run searched. Each run opens three
 * times with the same word: as the extension host, as `recollect mcp` and as `recollect tool`.
 */
/**
 * The database a snapshot holds, written out uncompressed chunk by chunk: the cold open's
 * baseline reads these bytes, and a database over 4 GiB fits no single Buffer.
 */
function writePlainDatabase(snapshot: string, plain: string): void {
  const frame = PagedFrame.fromFd(snapshot, fs.openSync(snapshot, 'r'));
  const out = fs.openSync(plain, 'w');
  try {
    for (let i = 0; i < frame.entries.length; i++) {
      const chunk = frame.load(i);
      fs.writeSync(out, chunk, 0, Math.min(chunk.length, frame.size - i * frame.chunkBytes), i * frame.chunkBytes);
    }
  } finally {
    fs.closeSync(out);
    frame.close();
  }
}

export function coldOpenBench(benchScript: string, home: string, queries: readonly string[], runs: number): ColdOpen {
  const out: ColdOpen = { open: [], firstQuery: [], secondQuery: [], tokenizerInit: [], wasm: [], openPlusQuery: [], read: [], readPlain: [], childWall: [], mcpReady: [], rssOpen: [], rssQuery: [], chunksOpen: [], chunksQuery: [], syncQuery: [], chunkBytes: 0, server: noRuns(), once: noRuns() };
  const warmUpQuery = queries[queries.length - 1] ?? 'error';
  const measured = queries.length > 1 ? queries.slice(0, -1) : queries;
  const queryOf = (i: number) => measured[i % Math.max(1, measured.length)] ?? 'error';
  const hintFile = path.join(home, HOT_CHUNKS_FILE);
  const plain = path.join(path.dirname(home), `${path.basename(home)}-database.plain`);
  writePlainDatabase(path.join(home, 'store.sqlite'), plain);
  const child = (args: string[]) => {
    const t = nowMs();
    const r = spawnSync(process.execPath, [benchScript, '--child', ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const wall = nowMs() - t;
    if (r.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${r.stderr}`);
    const line = r.stdout.trim().split('\n').pop() ?? '{}';
    const data = JSON.parse(line) as Record<string, number>;
    const get = (k: string) => data[k] ?? NaN;
    return { rssOpen: get('rssOpen'), rssQuery: get('rssQuery'), chunksOpen: get('chunksOpen'), chunksQuery: get('chunksQuery'), syncQuery: get('syncQuery'), chunkBytes: get('chunkBytes'), readMs: get('readMs'), openMs: get('openMs'), queryMs: get('queryMs'), secondQueryMs: get('secondQueryMs'), tokenizerInitMs: get('tokenizerInitMs'), wasmMs: get('wasmMs'), readyMs: get('readyMs'), wall };
  };
  child(['open', home, warmUpQuery]);
  const hint = fs.existsSync(hintFile) ? fs.readFileSync(hintFile) : undefined;
  const restoreHint = () => (hint ? fs.writeFileSync(hintFile, hint) : fs.rmSync(hintFile, { force: true }));
  for (let i = 0; i < runs; i++) {
    restoreHint();
    const read = child(['read', path.join(home, 'store.sqlite')]);
    out.read.push(read.readMs);
    out.readPlain.push(child(['read', plain]).readMs);
    const open = child(['open', home, queryOf(i)]);
    out.open.push(open.openMs);
    out.firstQuery.push(open.queryMs);
    out.openPlusQuery.push(open.openMs + open.queryMs);
    out.childWall.push(open.wall);
    out.secondQuery.push(open.secondQueryMs);
    out.rssOpen.push(open.rssOpen);
    out.rssQuery.push(open.rssQuery);
    out.chunksOpen.push(open.chunksOpen);
    out.chunksQuery.push(open.chunksQuery);
    out.syncQuery.push(open.syncQuery);
    out.chunkBytes = open.chunkBytes;
    for (const [kind, runs] of [['open-server', out.server], ['open-once', out.once]] as const) {
      restoreHint();
      const r = child([kind, home, queryOf(i)]);
      runs.open.push(r.openMs);
      runs.firstQuery.push(r.queryMs);
      runs.openPlusQuery.push(r.openMs + r.queryMs);
      runs.syncQuery.push(r.syncQuery);
    }
    out.tokenizerInit.push(child(['tokens']).tokenizerInitMs);
    out.wasm.push(child(['wasm']).wasmMs);
    out.mcpReady.push(child(['open-tokens', home]).readyMs);
  }
  fs.rmSync(plain, { force: true });
  return out;
}

/** What one compaction of the big store cost, measured in a fresh process that opened it through openServices. */
export interface CompactRun {
  ok: boolean;
  reason?: string;
  wallMs: number;
  phases: Record<string, number>;
  /** The process's RSS after openServices, and its peak while compacting (sampled every 10 ms, and the kernel's maxRSS). */
  rssOpen: number;
  rssPeak: number;
  maxRss: number;
  /** The compaction child process's own peak (kernel maxRSS), which the owner's figures never include. */
  childMaxRss: number;
  databaseBytesBefore: number;
  databaseBytesAfter: number;
  fileBytesBefore: number;
  fileBytesAfter: number;
}

/** `--child compact <home>`: what a long-lived process does after an idle checkpoint, asked for explicitly. */
export async function compactChild(home: string, wasmPath: string): Promise<CompactRun> {
  const s = await openServices({ home, wasmPath, autoCompact: false });
  const rssOpen = process.memoryUsage().rss;
  let rssPeak = rssOpen;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 10);
  try {
    const r = await s.store.compact();
    const base = { wallMs: r.wallMs, rssOpen, rssPeak, maxRss: process.resourceUsage().maxRSS * 1024 };
    if (!r.ok) return { ...base, ok: false, reason: r.reason, phases: {}, childMaxRss: 0, databaseBytesBefore: 0, databaseBytesAfter: 0, fileBytesBefore: 0, fileBytesAfter: 0 };
    return { ...base, ok: true, phases: r.phases, childMaxRss: r.childMaxRss, databaseBytesBefore: r.databaseBytesBefore, databaseBytesAfter: r.databaseBytesAfter, fileBytesBefore: r.fileBytesBefore, fileBytesAfter: r.fileBytesAfter };
  } finally {
    clearInterval(sampler);
    s.store.close();
  }
}

/**
 * Compacts fresh copies of `home` (the store as built, never compacted) in child processes,
 * `runs` times; the last compacted copy stays at the returned path for the cold opens.
 */
export function compactBench(benchScript: string, home: string, runs: number): { runs: CompactRun[]; compactedHome: string } {
  const compactedHome = `${home}-compacted`;
  const out: CompactRun[] = [];
  for (let i = 0; i < runs; i++) {
    fs.rmSync(compactedHome, { recursive: true, force: true });
    fs.cpSync(home, compactedHome, { recursive: true });
    fs.rmSync(path.join(compactedHome, 'store.compaction.json'), { force: true });
    const r = spawnSync(process.execPath, [benchScript, '--child', 'compact', compactedHome], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`compaction child failed: ${r.stderr}`);
    const run = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as CompactRun;
    if (!run.ok) throw new Error(`compaction refused: ${run.reason ?? '?'}`);
    out.push(run);
  }
  return { runs: out, compactedHome };
}

export function summarize(samples: number[]): { p50: number; p99: number } {
  return { p50: median(samples), p99: percentile(samples, 99) };
}
