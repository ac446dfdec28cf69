import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openServices } from '../src/core/services';
import { encodePagedSync } from '../src/core/store/pagedFrame';
import { readSnapshot } from '../src/core/store/snapshot';
import { lcmGrepTool } from '../src/core/tools/lcmGrep';
import { compilePattern } from '../src/core/lcm/regexPattern';
import { BLOCK_EVENTS, blocksHolding, INLINE_GRAMS, inlineGramKeys } from '../src/core/lcm/inlineGrams';
import { queryRows } from '../src/core/store/sqlite';
import { printNativeCallers, printSelfTime, profiled } from './cpuProfile';
import { median, nowMs, table } from './stats';

/**
 * `--child scale-diag <store home> regex|fulltext|grams|rechunk [--reps 4] [--grouped] [--pats a||b] [--chunk-kb 256] [--profile]`:
 * lcm_grep on a kept store (the scale section's `--scale-dir <dir>/store`, best a copy of it, as
 * the calls write blob filters and hints beside it), per pattern: wall time, the process's CPU
 * time (which the machine's load changes far less) and the snapshot chunks decompressed again
 * (memory_status's reloads), under whatever RECOLLECT_MEMORY_BUDGET_MB says. --grouped runs
 * each pattern's calls back to back, as section 5 does; otherwise each round runs every pattern.
 * --profile adds one call of each under V8's profiler (self time, and the callers of native time).
 * `rechunk` re-encodes the store's snapshot with another chunk size (same database); `grams`
 * prints the inline gram filter's size and, per pattern, the blocks it lets through.
 */

const REGEX = ['npm run dev', 'chatbot-ui', '"documentId":"1[0-9]"', '/OLLAMA/i', '2025-11-1[0-9]T[0-9]{2}:[0-9]{2}', 'localhost:[0-9]+'];
const FULL_TEXT = ['the', 'file', 'error', 'ollama', 'config*', 'chatbot ui', '"npm run dev"', 'typescript', 'documentid', 'mcp readme', 'session install'];
const CTX = { client: 'bench', workspace: '/nonexistent/bench' };

export async function scaleDiagChild(home: string, what: string, argv: readonly string[], wasm: string): Promise<void> {
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i > 0 ? argv[i + 1] : undefined;
  };
  if (what === 'rechunk') {
    const file = path.join(home, 'store.sqlite');
    const data = readSnapshot(file);
    if (!data) throw new Error(`no snapshot at ${file}`);
    const parts = encodePagedSync(data, Number(flag('chunk-kb') ?? 256) * 1024);
    fs.writeFileSync(file, Buffer.concat(parts));
    fs.rmSync(path.join(home, 'store.hot.json'), { force: true }); // a hint names chunks of the old size
    console.log(`re-encoded ${data.length} bytes of database into ${parts.length - 1} chunks, ${parts.reduce((a, b) => a + b.length, 0)} bytes`);
    return;
  }
  if (what === 'grams') return gramsDiag(home, wasm, flag('pats')?.split('||') ?? REGEX);
  if (what !== 'regex' && what !== 'fulltext') throw new Error(`scale-diag: ${what} is not regex, fulltext or rechunk`);
  const patterns = flag('pats')?.split('||') ?? (what === 'regex' ? REGEX : FULL_TEXT);
  const reps = Number(flag('reps') ?? 4);
  const s = await openServices({ home, wasmPath: wasm });
  try {
    const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`load ${load()}; budget ${JSON.stringify(s.store.memoryStatus().cache)}`);
    const input = (pattern: string) =>
      lcmGrepTool.input.parse({ pattern, mode: what === 'regex' ? 'regex' : 'full_text', scope: 'messages', allConversations: true, sort: 'relevance', limit: what === 'regex' ? 200 : 50 });
    for (const p of patterns) await lcmGrepTool.run(input(p), s, CTX); // one warm-up each
    const wall = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    const reloads = new Map<string, number>();
    const order = argv.includes('--grouped') ? patterns.flatMap((p) => Array<string>(reps).fill(p)) : Array.from({ length: reps }, () => patterns).flat();
    for (const p of order) {
      const before = s.store.memoryStatus().cache.reloads;
      const c0 = process.cpuUsage();
      const t = nowMs();
      await lcmGrepTool.run(input(p), s, CTX);
      const dt = nowMs() - t;
      const c = process.cpuUsage(c0);
      wall.set(p, [...(wall.get(p) ?? []), dt]);
      cpu.set(p, [...(cpu.get(p) ?? []), (c.user + c.system) / 1000]);
      reloads.set(p, (reloads.get(p) ?? 0) + s.store.memoryStatus().cache.reloads - before);
    }
    const f = (v: number) => v.toFixed(1);
    table(['pattern', 'wall p50 ms', 'cpu p50 ms', 'reloads / call'], patterns.map((p) => [p, f(median(wall.get(p) ?? [])), f(median(cpu.get(p) ?? [])), f((reloads.get(p) ?? 0) / reps)]));
    const sum = (m: Map<string, number[]>) => [...m.values()].reduce((a, v) => a + median(v), 0);
    console.log(`sum of p50: wall ${f(sum(wall))} ms, cpu ${f(sum(cpu))} ms; reloads ${[...reloads.values()].reduce((a, b) => a + b, 0)}; load ${load()}`);
    console.log(`cache ${JSON.stringify(s.store.memoryStatus().cache)} ${JSON.stringify(s.store.fileStats)}`);
    if (argv.includes('--profile')) {
      // One more call of each pattern under the profiler: where a warm call spends its time.
      const { profile } = await profiled(async () => {
        for (const p of patterns) await lcmGrepTool.run(input(p), s, CTX);
      });
      printSelfTime(profile, 25);
      printNativeCallers(profile, 4, 6);
    }
  } finally {
    s.store.close();
  }
}

/** `grams`: the inline gram filter's size, and per pattern the share of blocks it lets through and one call's scan stats. */
async function gramsDiag(home: string, wasm: string, patterns: readonly string[]): Promise<void> {
  const t0 = nowMs();
  const s = await openServices({ home, wasmPath: wasm, onReplayProgress: (d, t, w) => console.log(`${w ?? 'replay'} ${d}/${t} at ${(nowMs() - t0).toFixed(0)} ms`) });
  try {
    console.log(`open ${(nowMs() - t0).toFixed(0)} ms; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const db = s.store.db;
    const [size] = queryRows(db, `SELECT count(*) AS blocks, sum(length(bits)) AS bytes, sum(chars) AS chars FROM ${INLINE_GRAMS} WHERE block >= 0`);
    const [ev] = queryRows(db, 'SELECT count(*) AS n, sum(length(text)) AS chars FROM events WHERE blob IS NULL');
    const pragma = (name: string) => Number(queryRows(db, `PRAGMA ${name}`)[0]?.[name] ?? 0);
    console.log(`filter: ${JSON.stringify(size)}; inline events ${JSON.stringify(ev)}; pages ${pragma('page_count')}, free ${pragma('freelist_count')}`);
    for (const p of patterns) {
      const c = compilePattern(p);
      if ('error' in c) continue;
      const keys = inlineGramKeys(c);
      const found = keys && blocksHolding(db, keys);
      c.regex.dispose();
      const r = (await lcmGrepTool.run(lcmGrepTool.input.parse({ pattern: p, mode: 'regex', scope: 'messages', allConversations: true, sort: 'relevance', limit: 200 }), s, CTX)) as { scan?: unknown; count?: number };
      const lit = c.literals[0];
      if (lit) {
        // The blocks that do hold the literal (ASCII case folded), against which the filter's answer can be judged.
        const [t] = queryRows(db, `SELECT count(*) AS events, count(DISTINCT id / ${BLOCK_EVENTS}) AS blocks FROM events WHERE blob IS NULL AND instr(lower(text), ?) > 0`, [lit.toLowerCase()]);
        console.log(`  inline events holding ${JSON.stringify(lit)} (ASCII case folded): ${JSON.stringify(t)}`);
      }
      console.log(`${p}: blocks ${found ? `${found.blocks.length}/${found.of}` : 'n/a'}; count ${r.count}; scan ${JSON.stringify(r.scan)}`);
    }
  } finally {
    s.store.close();
  }
}
