import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { openServices } from '../src/core/services';
import { queryScalar } from '../src/core/store/sqlite';
import type { BenchContext } from './context';
import { chooseQueries, defaultFixturesDir, documentFrequencies, loadVocabulary, messageGenerator, type BenchQuery } from './corpus';
import { runChild } from './importBench';
import { runLcmSection, type LcmRatios } from './lcmBench';
import { buildStore } from './memorySections';
import type { NativeFigures } from './nativeImport';
import { exitPeakPreload, joinExitPeaks, ProcessTreeSampler, type ProcessPeak } from './processTree';
import { Rng } from './rng';
import { buildBaselines, runSearchBench } from './searchBench';
import { coldOpenBench } from './storeBench';
import { heading, mb, median, ms, note, nowMs, progress, ratio, result, table } from './stats';
import { folderSize, replicateTranscripts, type ReplicatedTranscripts } from './transcripts';

/**
 * The scale section (`--only scale --scale-mb N`, default 5,000): the memory of every kind of
 * Recollect process on a store imported from N MB of transcripts, and the other sections' speed
 * ratios on that store.
 *
 * 1. Writes N MB of transcripts with section 4's generator (copies of the real fixtures, fresh
 *    ids, varied words) and imports them with the real CLI (`recollect import`, a child process),
 *    sampling the RSS of it and of every process it starts (the compaction child).
 * 2. Bulk-loads a memory corpus (notes and facts, section 3's generator) so search_text has
 *    something to search beside the history.
 * 3. Starts every long-lived process kind on the store: three `recollect mcp` (the first stands
 *    in for the VS Code window, which owns the store while it runs), driven by the official MCP
 *    SDK client, and `recollect serve` over HTTP; then a one-shot `recollect tool search_text`.
 *    Each process's peak RSS, and the peak of the five long-lived ones' sum at one moment.
 * 4. Runs sections 3 and 5 and the cold open of section 2 on the same store.
 *
 * `--scale-dir <dir>` works in that folder instead of the run's temp folder and keeps it: a
 * later run with the same folder reuses its transcripts, and its imported store when the same
 * build of the CLI imported it (generating and importing 5 GB takes long). The budget is RECOLLECT_MEMORY_BUDGET_MB (default 512), passed to
 * every process as it is. The bench measures; it does not assume how the store shares itself.
 */

const MiB = 1024 * 1024;
const DEFAULT_BUDGET_MB = 512;
/** The shared-memory goal: the five long-lived processes together against the largest of them. */
const SHARED_GOAL = 1.3;

interface ImportRun {
  /** sha256 of the CLI that imported the store (cliBuild). */
  build?: string;
  wallMs: number;
  exitCode: number | null;
  report: { files?: number; sessions?: number; runs?: number; events?: number; problems?: unknown[]; summaries?: Record<string, unknown> };
  processes: ProcessPeak[];
  /** The import's largest RSS in each tenth of its run. */
  rssProfile: number[];
  storeBytes: number;
  native?: NativeFigures;
}

interface MemoryCorpus {
  messages: number;
  facts: number;
  buildMs: number;
  queries: BenchQuery[];
}

interface Saved {
  transcripts?: ReplicatedTranscripts & { replicateMs: number };
  import?: ImportRun;
  memory?: MemoryCorpus;
}

interface CallTiming {
  process: string;
  tool: string;
  ms: number;
  ok: boolean;
  reason?: string;
}

export async function runScaleSection(ctx: BenchContext): Promise<void> {
  const targetMb = ctx.arg('scale-mb', 5000);
  const budgetMb = Number(process.env.RECOLLECT_MEMORY_BUDGET_MB ?? DEFAULT_BUDGET_MB);
  const budget = budgetMb * MiB;
  const dirArg = process.argv.indexOf('--scale-dir');
  const dir = dirArg > 0 ? path.resolve(process.argv[dirArg + 1] as string) : path.join(ctx.tmp, `scale-${targetMb}`);
  fs.mkdirSync(dir, { recursive: true });
  const root = path.join(dir, 'transcripts');
  const home = path.join(dir, 'store');
  const savedFile = path.join(dir, 'scale.json');
  const saved: Saved = fs.existsSync(savedFile) ? (JSON.parse(fs.readFileSync(savedFile, 'utf8')) as Saved) : {};
  const save = () => fs.writeFileSync(savedFile, JSON.stringify(saved));
  const cli = privateCli(path.dirname(ctx.script), dir);
  // A store and its figures are reused only by the build that imported them: another build may read it differently or not at all.
  const build = cliBuild(cli);
  const { preload, outFile } = exitPeakPreload(dir);
  const env = { ...process.env, RECOLLECT_HOME: home, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim() };

  // ---- 1. transcripts and the import ------------------------------------------------------
  if (!saved.transcripts || saved.transcripts.bytes < targetMb * MiB * 0.99) {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
    delete saved.import;
    delete saved.memory;
    progress(`scale: writing ${targetMb} MB of transcripts under ${root}`);
    const t = nowMs();
    const raw = replicateTranscripts(defaultFixturesDir(), root, targetMb * MiB, new Rng(ctx.seed + 40), (c, b) => (c % 500 === 0 ? progress(`  ${c} copies, ${mb(b)}`) : undefined));
    saved.transcripts = { ...raw, copyDirs: [], replicateMs: nowMs() - t };
    save();
  } else {
    progress(`scale: reusing ${mb(saved.transcripts.bytes)} of transcripts under ${root}`);
  }
  const raw = saved.transcripts;
  if (!saved.import || saved.import.exitCode !== 0 || !saved.import.report.events || saved.import.build !== build) {
    fs.rmSync(home, { recursive: true, force: true });
    delete saved.memory;
    progress(`scale: recollect import ${root} (a child process, RSS sampled every 100 ms)`);
    saved.import = { ...(await importWithCli(cli, root, env, outFile)), build };
    if (saved.import.exitCode !== 0 || !saved.import.report.events) throw new Error(`recollect import exited with ${saved.import.exitCode} and reported ${saved.import.report.events ?? 'no'} events`);
    if (!process.argv.includes('--no-native')) {
      progress('scale: the same files into better-sqlite3 (native SQLite + FTS5), for the import ratio');
      const nativeFile = path.join(dir, 'native-import.sqlite');
      saved.import.native = runChild<NativeFigures>(ctx, ['native-import', nativeFile, root]);
      fs.rmSync(nativeFile, { force: true });
      fs.rmSync(`${nativeFile}-wal`, { force: true });
      fs.rmSync(`${nativeFile}-shm`, { force: true });
    }
    save();
  } else {
    progress(`scale: reusing the store imported under ${home} by this build`);
  }
  const imported = saved.import;

  // ---- 2. a memory corpus beside the history --------------------------------------------
  const memoryMessages = ctx.arg('scale-memory', 20_000);
  if (!saved.memory || saved.memory.messages !== memoryMessages) {
    progress(`scale: bulk-loading ${memoryMessages.toLocaleString('en-US')} notes and ${Math.round(memoryMessages / 20).toLocaleString('en-US')} facts (section 3's generator) in a child process`);
    saved.memory = runChild<MemoryCorpus>(ctx, ['scale-memory', home, String(memoryMessages), String(ctx.seed)]);
    save();
  }
  const memory = saved.memory;

  // ---- 3. every process kind on the store ------------------------------------------------
  progress('scale: three recollect mcp, recollect serve and a one-shot recollect tool on the store');
  const procs = await runProcesses(cli, env, outFile, memory.queries);

  // ---- 4. the speed ratios on the same store ----------------------------------------------
  const { search, storedEvents, openMs, baselineMs, baselineRows } = await searchOnStore(ctx, home, dir, memory.queries);
  search.print();
  // Section 5 on a 5 GB store takes half an hour; --scale-no-lcm leaves it out (its ratios are then n/a).
  const lcm: LcmRatios = process.argv.includes('--scale-no-lcm')
    ? { fullText: NaN, fts5Ms: NaN }
    : await runLcmSection(ctx, { home, raw, ours: { storedEvents, importMs: imported.wallMs, sizes: { snapshot: fileSize(path.join(home, 'store.sqlite')) } } }, 'scale: ');
  progress('scale: cold opens of the store (fresh processes; section 2\'s measurement)');
  const coldQueries = memory.queries.filter((q) => q.cls === '1w medium').map((q) => q.text);
  const cold = coldOpenBench(ctx.script, home, coldQueries, ctx.arg('open-runs', 3));

  // ---- print --------------------------------------------------------------------------------
  heading(`scale: ${mb(raw.bytes)} of transcripts imported, every process kind, budget ${budgetMb} MB`);
  note(`${raw.copies.toLocaleString('en-US')} copies of the ${raw.fixtureFiles} fixture transcripts (Claude Code with sub-agents, Codex, Copilot CLI, VS Code Copilot exports: tool calls and outputs, long replies; ~2% of their letters are Cyrillic, from the Copilot exports), fresh ids and varied words per copy: ${raw.files.toLocaleString('en-US')} files${raw.replicateMs ? `, written in ${ms(raw.replicateMs)}` : ''}.`);
  const rep = imported.report;
  result('recollect import: wall time (parse, journal, summary DAG, checkpoint, seal)', ms(imported.wallMs));
  result('  files / sessions / runs / events', `${rep.files ?? '?'} / ${rep.sessions ?? '?'} / ${rep.runs ?? '?'} / ${(rep.events ?? 0).toLocaleString('en-US')}`);
  result('  events stored / problems reported', `${storedEvents.toLocaleString('en-US')} / ${rep.problems?.length ?? '?'}`);
  result('  throughput (whole command)', `${Math.round((rep.events ?? 0) / (imported.wallMs / 1000)).toLocaleString('en-US')} events/s`);
  if (imported.rssProfile.length) result('  RSS over the import (peak in each tenth of its run)', imported.rssProfile.map((b) => (b / MiB).toFixed(0)).join(' ') + ' MB');
  result('  store on disk after the import', `${mb(imported.storeBytes)} (${pct(imported.storeBytes / raw.bytes)} of the transcripts)`);
  if (imported.native) {
    const n = imported.native;
    const r = (rep.events ?? 0) / imported.wallMs / (n.events / n.wallMs);
    result('better-sqlite3 import of the same files (baseline)', `${ms(n.wallMs)}, peak ${mb(n.kernelPeakRss ?? n.peakRss)}`);
    result('import rate recollect import / better-sqlite3', ratio(r), '≥ 0.50×', r >= 0.5);
    note('the whole CLI command is timed (it also builds the summary DAG, checkpoints and seals); section 4 times importPaths alone, so this ratio is the stricter one.');
    ctx.verdicts.push(['scale: import rate ≥ 0.5× better-sqlite3', r >= 0.5]);
  }
  result(`memory corpus bulk-loaded beside the history`, `${memory.messages.toLocaleString('en-US')} notes + ${memory.facts.toLocaleString('en-US')} facts, ${ms(memory.buildMs)}`);

  console.log('');
  note('tool calls (official MCP SDK client; serve over Streamable HTTP with its bearer token; the one-shot is a process of its own):');
  table(['process', 'tool', 'time', 'answer'], procs.calls.map((c) => [c.process, c.tool, ms(c.ms), c.ok ? 'ok' : `refused: ${c.reason ?? '?'}`]));

  console.log('');
  note(`peak RSS per process: the larger of the sampled VmRSS (every 100 ms from /proc/<pid>/status) and the kernel's VmHWM (read while it ran, and written by the process itself at exit through a --require preload); anon = RssAnon at the sampled peak. Children are found by their parent pid. "mcp #1" stands in for the VS Code window: it is started first, as the window would be.`);
  const rows: (string | number)[][] = [];
  const verdictRows: [string, number][] = [];
  const addRows = (peaks: ProcessPeak[]) => {
    for (const p of peaks) {
      const peak = Math.max(p.peakRss, p.hwm);
      rows.push([p.label, p.pid, mb(p.peakRss), mb(p.hwm), mb(p.peakAnon), mb(p.maxAnon), mb(p.peakPss), `${budgetMb} MB`, peak <= budget ? 'PASS' : 'MISS']);
      verdictRows.push([p.label, peak]);
    }
  };
  addRows(imported.processes);
  addRows(procs.peaks);
  table(['process', 'pid', 'peak RSS (sampled)', 'VmHWM', 'anon at peak', 'peak anon', 'peak Pss', 'budget', 'verdict'], rows);
  const over = verdictRows.filter(([, peak]) => peak > budget);
  result('processes over the budget', `${over.length} of ${verdictRows.length}`, `0 (each ≤ ${budgetMb} MB)`, over.length === 0);
  ctx.verdicts.push([`scale: every process ≤ ${budgetMb} MB`, over.length === 0]);
  const largest = Math.max(...procs.five.map((p) => Math.max(p.peakRss, p.hwm)));
  const sumOfPeaks = procs.five.reduce((a, p) => a + Math.max(p.peakRss, p.hwm), 0);
  const sharedRss = procs.fiveTogether / largest;
  const shared = procs.fiveUnique / largest;
  result('five long-lived processes: peak of their summed RSS', `${mb(procs.fiveTogether)} (sum of their peaks ${mb(sumOfPeaks)}); / the largest ${ratio(sharedRss)}`);
  result('  peak of their summed Pss', mb(procs.fivePss));
  result('  peak of their memory with shared pages counted once (anon + shmem summed, file pages of the largest once)', mb(procs.fiveUnique));
  result('  together (shared pages once) / the largest of them (its RSS)', ratio(shared), `≤ ${SHARED_GOAL.toFixed(2)}×`, shared <= SHARED_GOAL);
  note('the five: mcp #1 (the VS Code window\'s stand-in), mcp #2, mcp #3, serve, and the processes they started (or any other process with this store\'s RECOLLECT_HOME in its environment), summed at each sample; the one-shot tool is not among them (it comes and goes).');
  note('summed RSS counts the node binary\'s and its libraries\' file pages once per process, though the kernel holds them once for every node process on the machine; Pss divides each shared page among every process that maps it (node processes outside the five too, so on a busy machine it is lower than what the five alone would hold). The goal is judged on the five\'s own pages with the shared ones counted once: docs/performance.md "Scale".');
  ctx.verdicts.push([`scale: window + 3 mcp + serve ≤ ${SHARED_GOAL}× one of them`, shared <= SHARED_GOAL]);

  console.log('');
  note('speed ratios on this store (sections 3, 5 and 2 pointed at it; their own tables are printed above):');
  const sr = search.summary.p50Service / search.summary.p50Fts5;
  const coldReadPlain = median(cold.readPlain);
  const coldRatio = (runs: { openPlusQuery: number[] }) => median(runs.openPlusQuery) / coldReadPlain;
  const ratioRows: [string, number, string, number][] = [
    [`search_text p50 / FTS5 (${baselineRows.toLocaleString('en-US')} memory rows; baseline built in ${ms(baselineMs)})`, sr, '≤ 1.50×', 1.5],
    ['lcm_grep regex with a literal / ripgrep, worst pattern', lcm.regexWorst ?? NaN, '≤ 1.00×', 1],
    ['lcm_grep regex with a literal / ripgrep, geo-mean', lcm.regexGeo ?? NaN, '≤ 1.00×', 1],
    [`lcm_grep full_text p50 / FTS5 (copy built in ${ms(lcm.fts5Ms)})`, lcm.fullText, '≤ 1.50×', 1.5],
    ['open + first query / reading the database\'s bytes: extension host', coldRatio(cold), '≤ 2.00×', 2],
    ['  recollect mcp', coldRatio(cold.server), '≤ 2.00×', 2],
    ['  recollect tool (one-shot)', coldRatio(cold.once), '≤ 2.00×', 2],
  ];
  table(['ratio', 'measured', 'goal', 'verdict'], ratioRows.map(([label, v, goal, limit]) => [label, ratio(v), goal, Number.isFinite(v) ? (v <= limit ? 'PASS' : 'MISS') : 'n/a']));
  result('reading the database\'s bytes p50 / openServices here', `${ms(coldReadPlain)} / ${ms(openMs)}`);
  ctx.verdicts.push(['scale: search_text p50 ≤ 1.5× FTS5', sr <= 1.5]);
  ctx.verdicts.push(['scale: cold open ≤ 2× reading the database (recollect mcp)', coldRatio(cold.server) <= 2]);
  if (dirArg > 0) note(`kept ${dir} (transcripts, store, scale.json): a later run with --scale-dir ${dir} reuses them.`);
}

/**
 * The CLI and what it loads beside it (wasm, workers, the model), copied into the run's folder:
 * a run takes an hour at 5 GB, and a build in the meantime (the unit tests' setup rebuilds
 * dist/cli.js) must not change or truncate the program under it.
 */
function privateCli(distDir: string, dir: string): string {
  const cli = path.join(distDir, 'cli.js');
  if (!fs.existsSync(cli)) throw new Error(`the scale section runs the real CLI: ${cli} is missing (npm run bench builds it)`);
  const copy = path.join(dir, 'dist');
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(distDir, copy, { recursive: true, filter: (src) => !src.endsWith('.map') && path.basename(src) !== 'webview' && path.basename(src) !== 'bench.js' });
  return path.join(copy, 'cli.js');
}

/** sha256 of the CLI (its small entry and, beside it, the full CLI it loads), first 16 hex digits. */
function cliBuild(cli: string): string {
  const hash = createHash('sha256').update(fs.readFileSync(cli));
  const full = path.join(path.dirname(cli), 'cliMain.js');
  if (fs.existsSync(full)) hash.update(fs.readFileSync(full));
  return hash.digest('hex').slice(0, 16);
}

/** Section 3's search_text against FTS5, on this store's memory rows (the FTS5 copy is built here and timed). */
async function searchOnStore(ctx: BenchContext, home: string, dir: string, queries: BenchQuery[]) {
  progress('scale: opening the store in this process for the ratios');
  let t = nowMs();
  const s = await openServices({ home, wasmPath: ctx.wasm });
  const openMs = nowMs() - t;
  try {
    const storedEvents = Number(queryScalar(s.store.db, 'SELECT count(*) FROM events'));
    progress('scale: the FTS5 baseline of memory_fts (better-sqlite3) for search_text');
    t = nowMs();
    const baselines = buildBaselines(s, dir);
    const baselineMs = nowMs() - t;
    try {
      const search = runSearchBench(s, baselines, queries, ctx.arg('rounds', 9));
      return { search, storedEvents, openMs, baselineMs, baselineRows: baselines.rows };
    } finally {
      baselines.fts5.close();
      fs.rmSync(baselines.fts5File, { force: true });
      fs.rmSync(baselines.textFile, { force: true });
    }
  } finally {
    s.store.close();
  }
}

/** `recollect import <root>` as a person runs it, with its memory and its children's sampled. */
async function importWithCli(cli: string, root: string, env: NodeJS.ProcessEnv, exitPeaks: string): Promise<ImportRun> {
  fs.rmSync(exitPeaks, { force: true }); // an earlier run's pids may be reused
  const sampler = new ProcessTreeSampler({ env: `RECOLLECT_HOME=${env.RECOLLECT_HOME as string}`, into: [] }).start();
  const t0 = nowMs();
  const child = spawn(process.execPath, [cli, 'import', root], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  sampler.watch(child.pid as number, 'recollect import');
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  // `recollect import` from a shell waits for a child that runs the import (src/cli/mallocRelaunch.ts): its figures are the largest process's.
  const working = () => sampler.tree(child.pid as number).reduce<ProcessPeak | undefined>((a, b) => (!a || b.peakRss > a.peakRss ? b : a), undefined);
  const progressTimer = setInterval(() => {
    const p = working();
    const last = p?.timeline.at(-1);
    progress(`  import: ${((nowMs() - t0) / 1000).toFixed(0)} s, rss ${last ? mb(last[1]) : '?'}, peak ${p ? mb(p.peakRss) : '?'}`);
  }, 30_000);
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const wallMs = nowMs() - t0;
  clearInterval(progressTimer);
  sampler.stop();
  joinExitPeaks(sampler, exitPeaks);
  if (exitCode !== 0) progress(`recollect import failed: ${err}`);
  let report: ImportRun['report'] = {};
  try {
    report = JSON.parse(out) as ImportRun['report'];
  } catch {
    progress(`recollect import printed no JSON report: ${out.slice(0, 200)}`);
  }
  const home = env.RECOLLECT_HOME as string;
  const processes = [...sampler.peaks.values()].map(withoutTimeline);
  return { wallMs, exitCode, report, processes, rssProfile: sampler.profile(working()?.pid ?? (child.pid as number)), storeBytes: folderSize(home).bytes };
}

interface Session {
  label: string;
  pid: number;
  call(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A tool call that opens a store of gigabytes may take minutes; the SDK's own timeout is 60 s. */
const CALL_TIMEOUT_MS = 30 * 60_000;

async function connect(label: string, client: Client, transport: StdioClientTransport | StreamableHTTPClientTransport, pid: () => number): Promise<Session> {
  await client.connect(transport);
  return {
    label,
    pid: pid(),
    async call(tool, args) {
      const res = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
      const content = res.content as { type: string; text: string }[];
      return JSON.parse(content[0]?.text ?? '{}') as Record<string, unknown>;
    },
    close: () => client.close(),
  };
}

async function startMcp(cli: string, env: NodeJS.ProcessEnv, n: number): Promise<Session> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--name', `scale-${n}`], env: env as Record<string, string>, stderr: 'pipe' });
  // Drained, or a chatty server would block on a full pipe.
  transport.stderr?.on('data', () => undefined);
  const client = new Client({ name: `scale-bench-${n}`, version: '1.0.0' });
  return connect(n === 1 ? 'recollect mcp #1 (stands in for the VS Code window)' : `recollect mcp #${n}`, client, transport, () => transport.pid as number);
}

async function startServe(cli: string, env: NodeJS.ProcessEnv): Promise<{ session: Session; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [cli, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stderr?.on('data', () => undefined);
  let out = '';
  const ready = await new Promise<{ url: string; tokenFile: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`recollect serve did not start: ${out}`)), CALL_TIMEOUT_MS);
    proc.once('exit', (code) => reject(new Error(`recollect serve exited with ${code}: ${out}`)));
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /listening on (\S+)/.exec(out);
      const token = /bearer token in (\S+);/.exec(out);
      if (url && token) {
        clearTimeout(timer);
        resolve({ url: url[1] as string, tokenFile: token[1] as string });
      }
    });
  });
  const token = fs.readFileSync(ready.tokenFile, 'utf8').trim();
  const transport = new StreamableHTTPClientTransport(new URL(ready.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'scale-bench-http', version: '1.0.0' });
  return { session: await connect('recollect serve', client, transport, () => proc.pid as number), proc };
}

/** What an agent asks in a session: memory, context, history by keyword, history by pattern and by words. */
function firstCalls(q: string): [string, Record<string, unknown>][] {
  return [
    ['search_text', { query: q }],
    ['get_context', { query: `what do we know about ${q}` }],
    ['chat_history', { mode: 'search', query: 'error while running the tests' }],
    ['lcm_grep', { pattern: 'npm run dev', allConversations: true }],
    ['lcm_grep', { pattern: 'config', mode: 'full_text', allConversations: true }],
  ];
}

async function runProcesses(cli: string, env: NodeJS.ProcessEnv, exitPeaks: string, queries: BenchQuery[]): Promise<{ peaks: ProcessPeak[]; five: ProcessPeak[]; fiveTogether: number; fivePss: number; fiveUnique: number; calls: CallTiming[] }> {
  fs.rmSync(exitPeaks, { force: true });
  const sampler = new ProcessTreeSampler({ env: `RECOLLECT_HOME=${env.RECOLLECT_HOME as string}`, into: ['five'] }).start();
  const calls: CallTiming[] = [];
  const sessions: Session[] = [];
  let serve: ChildProcess | undefined;
  let oneShotPid: number | undefined;
  const query = (i: number) => queries[i % queries.length]?.text ?? 'error';
  const callAll = async (session: Session, list: [string, Record<string, unknown>][]) => {
    for (const [tool, args] of list) {
      const t = nowMs();
      const r = await session.call(tool, args);
      calls.push({ process: session.label, tool, ms: nowMs() - t, ok: r.ok !== false, ...(r.ok === false ? { reason: String(r.reason ?? '') } : {}) });
    }
  };
  try {
    for (let n = 1; n <= 3; n++) {
      const s = await startMcp(cli, env, n);
      sampler.watch(s.pid, s.label, ['five']);
      sessions.push(s);
      await callAll(s, firstCalls(query(n)));
    }
    const started = await startServe(cli, env);
    serve = started.proc;
    sampler.watch(started.session.pid, started.session.label, ['five']);
    sessions.push(started.session);
    await callAll(started.session, firstCalls(query(4)));
    // The one-shot process, while the four long-lived ones run.
    const t = nowMs();
    const oneShot = spawn(process.execPath, [cli, 'tool', 'search_text', JSON.stringify({ query: query(5) })], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    oneShotPid = oneShot.pid as number;
    sampler.watch(oneShotPid, 'recollect tool search_text (one-shot)');
    let out = '';
    oneShot.stdout.on('data', (d: Buffer) => (out += d.toString()));
    oneShot.stderr.on('data', () => undefined);
    const code = await new Promise<number | null>((resolve) => oneShot.once('exit', resolve));
    let answer: Record<string, unknown> = {};
    try {
      answer = JSON.parse(out) as Record<string, unknown>;
    } catch {
      // reported below as a refusal with the exit code
    }
    calls.push({ process: 'recollect tool (one-shot, whole process)', tool: 'search_text', ms: nowMs() - t, ok: code === 0 && answer.ok !== false, ...(code !== 0 ? { reason: `exit ${code}: ${String(answer.reason ?? out.slice(0, 120))}` } : {}) });
    // A second round with all four alive, so their peaks overlap as a day's sessions do.
    for (const [i, s] of sessions.entries()) await callAll(s, [['search_text', { query: query(6 + i) }], ['chat_history', { mode: 'search', query: query(10 + i) }]]);
    await new Promise((r) => setTimeout(r, 2000));
  } finally {
    // Closing is measured too: a closing store may checkpoint. The clients go first and the owner
    // (mcp #1) last, so no client takes the store over on the way out: a process's peak is that
    // of its role (closed owner first, the last one left opened the whole store as the new owner).
    const serveSession = sessions.find((s) => s.label === 'recollect serve');
    await serveSession?.close().catch(() => undefined);
    if (serve && serve.exitCode === null && serve.signalCode === null) {
      const exited = new Promise((r) => serve?.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    for (const s of [...sessions].reverse()) {
      if (s.label === 'recollect serve') continue;
      await s.close().catch(() => undefined);
    }
    await waitGone([...sampler.peaks.keys()], 120_000);
    sampler.stop();
    joinExitPeaks(sampler, exitPeaks);
  }
  const oneShot = new Set(oneShotPid === undefined ? [] : sampler.tree(oneShotPid).map((p) => p.pid));
  const all = [...sampler.peaks.values()].map(withoutTimeline);
  const five = all.filter((p) => !oneShot.has(p.pid));
  return { peaks: [...five, ...all.filter((p) => oneShot.has(p.pid))], five, fiveTogether: sampler.groupPeaks.get('five') ?? NaN, fivePss: sampler.groupPssPeaks.get('five') ?? NaN, fiveUnique: sampler.groupUniquePeaks.get('five') ?? NaN, calls };
}

/** Waits until none of `pids` runs any more (a closing store may checkpoint before its process exits). */
async function waitGone(pids: number[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (pids.every((pid) => !fs.existsSync(`/proc/${pid}/status`) || !/VmRSS:/.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8')))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  progress(`scale: processes ${pids.join(', ')} still running after ${timeoutMs / 1000} s`);
}

/**
 * `--child scale-memory <home> <messages> <seed>`: section 3's notes and facts, bulk-loaded into
 * the imported store through the memory module's appliers (bulkLoad.ts), and the queries
 * section 3 would choose for that corpus.
 */
export async function scaleMemoryChild(home: string, messages: number, seed: number, wasm: string): Promise<MemoryCorpus> {
  const vocab = loadVocabulary(defaultFixturesDir(), new Rng(seed));
  const gen = messageGenerator(vocab, new Rng(seed + 1));
  const corpus: string[] = [];
  for (let i = 0; i < messages; i++) corpus.push(gen.next());
  const queries = chooseQueries(documentFrequencies(corpus), messages, vocab, new Rng(seed + 2));
  const facts = Math.round(messages / 20);
  const t = nowMs();
  await buildStore(wasm, home, corpus, messages, facts, vocab.words.slice(100, 4000), new Rng(seed + 7));
  return { messages, facts, buildMs: nowMs() - t, queries };
}

/** The figures kept (scale.json) without the samples behind them. */
function withoutTimeline(p: ProcessPeak): ProcessPeak {
  return { ...p, timeline: [] };
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

function pct(v: number): string {
  return Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : 'n/a';
}
