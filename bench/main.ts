import { runPoolSection } from './poolBench';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openServices } from '../src/core/services';
import { loadSqlJs, setWasmCompilation } from '../src/core/store/sqlite';
import { countTokens, warmTokenizer } from '../src/core/text/tokens';
import { parseSections, type BenchContext } from './context';
import { runContextSection } from './contextBench';
import { coldOpenDiag } from './coldOpenDiag';
import { compactChild } from './storeBench';
import { importChild } from './importChild';
import { dropImport, printImport, runImport } from './importBench';
import { runLcmSection } from './lcmBench';
import { runMemorySections } from './memorySections';
import { nativeImportChild } from './nativeImport';
import { poolMachineChild } from './poolMachine';
import { runScaleSection, scaleMemoryChild } from './scaleBench';
import { scaleDiagChild } from './scaleDiag';
import { heading, ms, nowMs, result } from './stats';

/**
 * `npm run bench`: prints figures and ratios against baselines measured in the same run.
 * Nothing asserts; every figure has its goal and PASS/MISS beside it.
 *
 *   node --expose-gc dist/bench.js [--only remember,open,search,import,lcm,context,pool] [--keep]
 *     section 7 (pool): [--pool-ops 100000] [--pool-lag-samples 100] [--pool-sim-seconds 10] [--pool-sim-rate 5]
 *     sections 1–3: [--scale 0.2] [--rounds 9] [--remember 1000]
 *     section 4:    [--import-mb 100] (transcripts imported, against better-sqlite3)
 *     section 5:    [--lcm-mb 1024] (transcripts imported for lcm_grep; section 4's store when equal) [--no-dag] (grep figures without the summary DAG build)
 *     section 6:    [--facts 50000] [--notes 20000] [--embed-sample 400] (memories embedded for real; the rest get mixed vectors)
 *     scale:        [--scale-mb 5000] [--scale-dir <dir>] (kept; reused by a later run) [--scale-memory 20000] [--no-native] [--scale-no-lcm]
 *                   (only when named in --only; the budget is RECOLLECT_MEMORY_BUDGET_MB, default 512)
 *
 * --only runs some sections (names above, comma-separated); --keep leaves the stores in the
 * temp folder; --diag prints diagnosis tables: for sections 1–3 instead of the figures
 * (search_text and searchFts step by step, alternative SQL shapes, remember's CPU path;
 * with --reuse <dir> [--remember-only]), for sections 4–6 beside them.
 * Children: --child open|open-server|open-once|open-diag|open-tokens|compact|read|tokens|wasm|import|native-import|scale-memory|pool-machine <path> (fresh-process measurements);
 *   --child scale-diag <store home> regex|fulltext|rechunk (lcm_grep's CPU time and chunk reloads on a kept store: bench/scaleDiag.ts).
 */

const WASM = path.join(__dirname, 'sql-wasm.wasm');
const SEED = 20260101;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

async function child(): Promise<void> {
  const [, , , mode, target, query] = process.argv;
  if (mode === 'read') {
    // In 64 MB pieces into one buffer: readFileSync refuses files over 2 GiB, and a year's database is larger.
    const t0 = nowMs();
    const fd = fs.openSync(target as string, 'r');
    const piece = Buffer.allocUnsafe(64 * 1024 * 1024);
    let bytes = 0;
    for (let got; (got = fs.readSync(fd, piece, 0, piece.length, bytes)) > 0; ) bytes += got;
    fs.closeSync(fd);
    console.log(JSON.stringify({ readMs: nowMs() - t0, bytes }));
    return;
  }
  if (mode === 'open' || mode === 'open-server' || mode === 'open-once') {
    // open: the extension host (V8's defaults); open-server: `recollect mcp`; open-once: `recollect tool`.
    if (mode !== 'open') setWasmCompilation(mode === 'open-once' ? 'one-shot' : 'server');
    const t0 = nowMs();
    const s = await openServices({ home: target as string, wasmPath: WASM });
    const t1 = nowMs();
    const rssOpen = process.memoryUsage().rss;
    const chunksOpen = s.store.fileStats.loadedChunks;
    const syncOpen = s.store.fileStats.syncLoads;
    const r = s.memory.searchText({ query: query ?? 'error', top_k: 20 });
    const t2 = nowMs();
    if (!r.ok) throw new Error('first query refused');
    const rssQuery = process.memoryUsage().rss;
    const chunksQuery = s.store.fileStats.loadedChunks;
    const syncQuery = s.store.fileStats.syncLoads - syncOpen;
    const again = s.memory.searchText({ query: query ?? 'error', top_k: 20 });
    const t3 = nowMs();
    if (!again.ok) throw new Error('second query refused');
    const { chunkBytes } = s.store.fileStats;
    s.store.close();
    console.log(JSON.stringify({ openMs: t1 - t0, queryMs: t2 - t1, secondQueryMs: t3 - t2, hits: r.hits.length, rssOpen, rssQuery, chunksOpen, chunksQuery, syncQuery, chunkBytes }));
    return;
  }
  if (mode === 'open-diag') {
    console.log(JSON.stringify(await coldOpenDiag(target as string, query ?? 'error', WASM)));
    return;
  }
  if (mode === 'compact') {
    console.log(JSON.stringify(await compactChild(target as string, WASM)));
    return;
  }
  if (mode === 'open-tokens') {
    // As `recollect mcp` starts: the store opens while the tokenizer warms up (mcpServer.ts); a
    // first tool call that counts tokens (get_context) can answer once both are done.
    setWasmCompilation('server');
    const t0 = nowMs();
    const opening = openServices({ home: target as string, wasmPath: WASM });
    warmTokenizer();
    const s = await opening;
    const t1 = nowMs();
    countTokens('the first counted answer');
    const t2 = nowMs();
    s.store.close();
    console.log(JSON.stringify({ openMs: t1 - t0, readyMs: t2 - t0 }));
    return;
  }
  if (mode === 'tokens') {
    // The first token count in a process builds the o200k encoder.
    const t0 = nowMs();
    countTokens('warm up the encoder');
    console.log(JSON.stringify({ tokenizerInitMs: nowMs() - t0 }));
    return;
  }
  if (mode === 'wasm') {
    const t0 = nowMs();
    await loadSqlJs(WASM);
    console.log(JSON.stringify({ wasmMs: nowMs() - t0 }));
    return;
  }
  if (mode === 'import') {
    const [, , , , home, root, wasm] = process.argv;
    console.log(JSON.stringify(await importChild(home as string, root as string, wasm as string)));
    return;
  }
  if (mode === 'native-import') {
    const [, , , , dbFile, root] = process.argv;
    console.log(JSON.stringify(nativeImportChild(dbFile as string, root as string)));
    return;
  }
  if (mode === 'scale-diag') {
    await scaleDiagChild(target as string, query as string, process.argv, WASM);
    return;
  }
  if (mode === 'scale-memory') {
    const [, , , , home, messages, seed, wasm] = process.argv;
    console.log(JSON.stringify(await scaleMemoryChild(home as string, Number(messages), Number(seed), wasm as string)));
    return;
  }
  if (mode === 'pool-machine') {
    await poolMachineChild(JSON.parse(target as string));
    return;
  }
  throw new Error(`unknown child mode ${mode}`);
}

async function bench(): Promise<void> {
  const t0 = nowMs();
  const want = parseSections(process.argv);
  const loadStart = os.loadavg();
  // --reuse <dir> keeps and reuses the stores of an earlier --keep run (for diagnosis only).
  const reuseArg = process.argv.indexOf('--reuse');
  const reuse = reuseArg > 0 ? process.argv[reuseArg + 1] : undefined;
  const tmp = reuse ?? fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-bench-'));
  const ctx: BenchContext = {
    tmp, reuse, wasm: WASM, seed: SEED, script: __filename,
    diag: process.argv.includes('--diag'),
    want: (s) => want.has(s),
    arg,
    verdicts: [],
  };
  console.log(`Recollect benchmark — node ${process.version}, ${os.cpus().length}× ${os.cpus()[0]?.model ?? 'cpu'}, ${os.platform()} ${os.release()}`);
  console.log(`load average at start ${loadStart.map((l) => l.toFixed(2)).join(' ')} (other work on this machine skews every figure); sections: ${[...want].join(', ')}`);
  try {
    if (want.has('remember') || want.has('open') || want.has('search')) await runMemorySections(ctx);
    // Section 4 imports --import-mb (default 100) with its native baseline; section 5 greps a store
    // of --lcm-mb (default 1024), imported the same way, or section 4's when the sizes agree.
    const importMb = arg('import-mb', 100);
    const lcmMb = arg('lcm-mb', 1024);
    const keep = process.argv.includes('--keep') || reuse !== undefined;
    let stage = want.has('import') ? runImport(ctx, true, importMb) : undefined;
    if (stage) printImport(ctx, stage);
    if (want.has('lcm')) {
      if (stage && lcmMb !== importMb && !keep) dropImport(stage);
      if (!stage || lcmMb !== importMb) {
        stage = runImport(ctx, false, lcmMb);
        console.log(`\n(for section 5: imported ${stage.ours.events.toLocaleString('en-US')} events from ${(stage.raw.bytes / 1048576).toFixed(1)} MB of transcripts in ${ms(stage.ours.importMs)}, ${Math.round(stage.ours.events / (stage.ours.importMs / 1000)).toLocaleString('en-US')} events/s; peak RSS ${((stage.ours.kernelPeakRss ?? stage.ours.peakRss) / 1048576).toFixed(0)} MB; store ${((stage.ours.sizes.snapshot + stage.ours.sizes.journal + (stage.ours.sizes.sealed ?? 0) + stage.ours.sizes.blobs) / 1048576).toFixed(1)} MB)`);
      }
      await runLcmSection(ctx, stage);
    }
    if (stage && !keep) dropImport(stage);
    if (want.has('context')) await runContextSection(ctx);
    if (want.has('pool')) await runPoolSection(ctx);
    if (want.has('scale')) await runScaleSection(ctx);

    heading('summary');
    for (const [label, ok] of ctx.verdicts) result(label, ok ? 'PASS' : 'MISS');
    console.log(`\nload average at end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`total bench time ${ms(nowMs() - t0)}`);
  } finally {
    if (process.argv.includes('--keep') || reuse) console.log(`kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const run = process.argv[2] === '--child' ? child() : bench();
run.catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
