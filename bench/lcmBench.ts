import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import BetterSqlite3, { type Database as NativeDatabase } from 'better-sqlite3';
import { HISTORY_FTS } from '../src/core/history/historySchema';
import { BLOB_GRAMS_FILE } from '../src/core/lcm/blobGrams';
import { compilePattern } from '../src/core/lcm/regexPattern';
import { statColumns } from '../src/core/search/corpusStats';
import { forgetLengths, heldLengths, noteJoinedRows } from '../src/core/search/docLengths';
import { searchFts } from '../src/core/search/ftsSearch';
import { queryRows, queryScalar } from '../src/core/store/sqlite';
import { parseMatchQuery } from '../src/core/search/matchQuery';
import { openServices, type Services } from '../src/core/services';
import { lcmGrepTool } from '../src/core/tools/lcmGrep';
import type { BenchContext } from './context';
import type { ImportStage } from './importBench';
import { gc } from './memorySampler';
import { fts5Query } from './searchBench';
import { heading, mb, median, ms, note, nowMs, progress, ratio, result, table } from './stats';

/**
 * Section 5: lcm_grep over the store section 4 imported. Regex mode against ripgrep over the
 * same raw transcript files (spawn included), full_text mode against better-sqlite3 FTS5 over
 * the same rows as history_fts.
 */

interface RegexCase {
  /** What an agent passes to lcm_grep. */
  pattern: string;
  /** The same search for rg over the raw files, where JSON escapes quotes inside strings. */
  rg: string[];
}

const REGEX_CASES: RegexCase[] = [
  { pattern: 'npm run dev', rg: ['npm run dev'] },
  { pattern: 'chatbot-ui', rg: ['chatbot-ui'] },
  { pattern: '"documentId":"1[0-9]"', rg: ['\\\\"documentId\\\\":\\\\"1[0-9]\\\\"'] },
  { pattern: '/OLLAMA/i', rg: ['-i', 'OLLAMA'] },
  { pattern: '2025-11-1[0-9]T[0-9]{2}:[0-9]{2}', rg: ['2025-11-1[0-9]T[0-9]{2}:[0-9]{2}'] },
  { pattern: 'localhost:[0-9]+', rg: ['localhost:[0-9]+'] },
  // No literal at all: every event is read (no goal applies).
  { pattern: '[0-9a-f]{40}', rg: ['[0-9a-f]{40}'] },
];

const FULL_TEXT_QUERIES = ['the', 'file', 'error', 'ollama', 'config*', 'chatbot ui', '"npm run dev"', 'typescript', 'documentid', 'mcp readme', 'session install'];

interface Timed {
  ours: number[];
  oursDefault: number[];
  base: number[];
  baseOneCore: number[];
  scorer: number[];
}

type GrepInfo = { ok?: boolean; reason?: string; count?: number; truncated?: boolean; scan?: Record<string, { prefilter: string; candidates: number; scanned: number; bytesScanned: number; blobsRead?: number }> };
interface RegexRow { c: RegexCase; literal: boolean; tm: Timed; info: GrepInfo; rgCount: number }
interface FullTextRow { q: string; tm: Timed; info: GrepInfo; fts5Count: number }

const newTimed = (): Timed => ({ ours: [], oursDefault: [], base: [], baseOneCore: [], scorer: [] });
const CTX = { client: 'bench', workspace: '/nonexistent/bench' };

/** What the section needs of an import: the store, the raw files rg reads, and a few figures for its notes. */
export interface GrepStore {
  home: string;
  raw: Pick<ImportStage['raw'], 'root' | 'files' | 'bytes'>;
  ours: Pick<ImportStage['ours'], 'storedEvents' | 'importMs'> & { sizes: Pick<ImportStage['ours']['sizes'], 'snapshot'> };
}

/** The section's goal figures, for a caller that tabulates them (the scale section). */
export interface LcmRatios {
  /** Regex with a literal, ours / rg: geo-mean and worst pattern (undefined without rg). */
  regexGeo?: number;
  regexWorst?: number;
  /** full_text p50 ours / FTS5, all queries pooled, and the FTS5 copy's build time. */
  fullText: number;
  fts5Ms: number;
}

/** `label` prefixes the verdicts, so a second run of this section (the scale section's) is told apart in the summary. */
export async function runLcmSection(ctx: BenchContext, stage: GrepStore, label = ''): Promise<LcmRatios> {
  const rounds = ctx.arg('lcm-rounds', 3);
  progress('lcm: opening the imported store');
  let t = nowMs();
  const s = await openServices({ home: stage.home, wasmPath: ctx.wasm });
  const openMs = nowMs() - t;
  let fts5: NativeDatabase | undefined;
  try {
    // --no-dag: grep figures alone (messages scope) without the minutes a 1 GB DAG build takes.
    const skipDag = process.argv.includes('--no-dag');
    if (!skipDag) progress('lcm: building the summary DAG (extractive summariser, as `recollect import` does)');
    t = nowMs();
    const dag = skipDag ? undefined : await s.lcm.buildAll();
    const dagMs = nowMs() - t;
    // What a long-lived process leaves behind: after its idle checkpoint it compacts a database
    // this size (compaction.ts: FTS4 optimize + VACUUM), and reads on from the compacted file.
    let compacted: Awaited<ReturnType<typeof s.store.compact>> | undefined;
    if (!process.argv.includes('--no-compact')) {
      progress('lcm: checkpoint and compaction, as a long-lived process does once idle');
      s.store.checkpoint();
      compacted = await s.store.compact();
    }
    gc();
    const rg = findRipgrep();
    const ratios: LcmRatios = { fullText: NaN, fts5Ms: NaN };
    const grep = async (input: Record<string, unknown>) => {
      const r = (await lcmGrepTool.run(lcmGrepTool.input.parse(input), s, CTX)) as GrepInfo;
      if (r.ok !== true) throw new Error(`lcm_grep refused ${JSON.stringify(input)}: ${r.reason}`);
      return r;
    };
    /** One round of ours: the full call (timed into `ours`, its answer returned) and the tool's default call. */
    const timeOurs = async (tm: Timed, full: Record<string, unknown>, dflt: Record<string, unknown>, keep: boolean) => {
      let t0 = nowMs();
      const info = await grep(full);
      if (keep) tm.ours.push(nowMs() - t0);
      t0 = nowMs();
      await grep(dflt);
      if (keep) tm.oursDefault.push(nowMs() - t0);
      return info;
    };

    // ---- regex vs rg ----------------------------------------------------------------------
    progress(`lcm: regex mode, ${REGEX_CASES.length} patterns × ${rounds} rounds (ours full scan, ours default call, rg, rg -j1)`);
    const regexRows: RegexRow[] = [];
    // The first regex search of a store reads every large event's blob and leaves its trigram
    // filter (later searches skip the blobs it rules out): that cold call is timed on its own.
    fs.rmSync(path.join(stage.home, BLOB_GRAMS_FILE), { force: true });
    t = nowMs();
    const cold = await grep({ pattern: REGEX_CASES[0]?.pattern, mode: 'regex', scope: 'messages', allConversations: true, sort: 'relevance', limit: 200 });
    const coldMs = nowMs() - t;
    for (const c of REGEX_CASES) {
      const compiled = compilePattern(c.pattern);
      const literal = !('error' in compiled) && compiled.literals.length > 0;
      if (!('error' in compiled)) compiled.regex.dispose();
      const full = { pattern: c.pattern, mode: 'regex', scope: 'messages', allConversations: true, sort: 'relevance', limit: 200 };
      const dflt = { pattern: c.pattern, allConversations: true };
      const tm = newTimed();
      let info = await grep(full); // the warm-up (at 1 GB a full scan takes seconds: one is enough)
      let rgCount = 0;
      for (let r = 0; r < rounds; r++) {
        info = await timeOurs(tm, full, dflt, true);
        if (rg) {
          let t0 = nowMs();
          rgCount = runRg(rg, c.rg, stage.raw.root, []);
          tm.base.push(nowMs() - t0);
          t0 = nowMs();
          runRg(rg, c.rg, stage.raw.root, ['-j1']);
          tm.baseOneCore.push(nowMs() - t0);
        }
      }
      regexRows.push({ c, literal, tm, info, rgCount });
    }

    // ---- full_text vs FTS5 ----------------------------------------------------------------
    progress('lcm: copying history_fts into better-sqlite3 FTS5 for the full_text baseline');
    t = nowMs();
    const fts5File = path.join(ctx.tmp, 'lcm-fts5.sqlite');
    fts5 = buildFts5(s, fts5File);
    const fts5Ms = nowMs() - t;
    const rankStmt = fts5.prepare(
      `SELECT rowid, bm25(t) AS score, snippet(t, 0, '[', ']', '…', 24) AS snippet, session_id, kind, created_at FROM t
       WHERE t MATCH ? ORDER BY rank LIMIT 50`,
    );
    const countStmt = fts5.prepare('SELECT count(*) FROM t WHERE t MATCH ?').pluck();
    progress(`lcm: full_text mode, ${FULL_TEXT_QUERIES.length} queries × ${rounds + 2} rounds`);
    const ftRows: FullTextRow[] = [];
    for (const q of FULL_TEXT_QUERIES) {
      const match = parseMatchQuery(q)?.match;
      if (!match) throw new Error(`bench query ${q} does not parse`);
      const q5 = fts5Query(match);
      const full = { pattern: q, mode: 'full_text', scope: 'messages', allConversations: true, sort: 'relevance', limit: 50 };
      const dflt = { pattern: q, mode: 'full_text', allConversations: true };
      const tm = newTimed();
      let info = await grep(full);
      for (let r = -1; r < rounds + 2; r++) {
        const keep = r >= 0;
        info = await timeOurs(tm, full, dflt, keep);
        let t0 = nowMs();
        searchFts(s.store.db, HISTORY_FTS, { query: q, limit: 50, sort: 'relevance', now: Date.now() });
        if (keep) tm.scorer.push(nowMs() - t0);
        t0 = nowMs();
        rankStmt.all(q5);
        if (keep) tm.base.push(nowMs() - t0);
      }
      ftRows.push({ q, tm, info, fts5Count: Number(countStmt.get(q5)) });
    }
    const lengths = timeDocLengths(s, FULL_TEXT_QUERIES, rounds + 2);

    // ---- print -------------------------------------------------------------------------------
    const events = stage.ours.storedEvents;
    heading(`5. lcm_grep over ${mb(stage.raw.bytes)} of imported transcripts (${events.toLocaleString('en-US')} events) vs ripgrep and FTS5`);
    if (stage.raw.bytes < 1024 * 1024 * 1024) {
      note(`measured at ${mb(stage.raw.bytes)}, not 1 GB (--lcm-mb): at this run's import rate 1 GB takes ~${ms((stage.ours.importMs * 1024 * 1024 * 1024) / stage.raw.bytes)} to import, and its sql.js database, which lives in memory, would be ~${mb((stage.ours.sizes.snapshot * 1024 * 1024 * 1024) / stage.raw.bytes)}. Both sides scan bytes linearly.`);
    }
    result('openServices on the imported store', ms(openMs));
    if (compacted?.ok) result('compaction before the queries (child process; --no-compact skips it)', `${ms(compacted.wallMs)}, child maxRSS ${mb(compacted.childMaxRss)}`);
    else note(compacted ? `compaction did not run: ${compacted.reason}` : 'not compacted (--no-compact): the FTS4 index keeps the segments the import left.');
    if (dag) result('summary DAG build (extractive), lcm.buildAll', `${ms(dagMs)}: ${dag.leaves} leaves, ${dag.condensed} condensed over ${dag.sessions} sessions`);
    else note('summary DAG not built (--no-dag): the default calls (scope both) search no summaries, and no message shows a coveredBy.');
    note(`regex: ours = lcm_grep tool (mode regex, scope messages, allConversations, sort relevance, limit 200: reads every candidate — the same full pass rg makes; from 1,000 blobs to read, a worker thread reads and decodes them while the main thread scans the inline rows, so both use up to two cores); default = the call an agent makes (scope both, sort recency, limit 50: stops at 50 matches). p50 of ${rounds} interleaved runs after one warm-up of ours.`);
    note(`rg = rg -c <pattern> over the ${stage.raw.files.toLocaleString('en-US')} raw files, spawn included, using both cores; rg -j1 = one thread. Counts differ by nature: rg counts matching lines of raw JSON, lcm_grep matching events (capped at 1,000 per event).`);
    table(
      ['pattern', 'literal', 'prefilter', 'candidates', 'scanned', 'blobs read', 'matches', 'rg lines', 'ours', 'default', 'rg', 'rg -j1', 'ours/rg'],
      regexRows.map(({ c, literal, tm, info, rgCount }) => {
        const scan = info.scan?.messages;
        return [c.pattern, literal ? 'yes' : 'no', scan?.prefilter ?? '-', scan?.candidates ?? '-', scan ? `${scan.scanned} (${mb(scan.bytesScanned)})` : '-', scan?.blobsRead ?? '-',
          `${info.count ?? 0}${info.truncated ? '+' : ''}`, rg ? rgCount : '-', ms(median(tm.ours)), ms(median(tm.oursDefault)),
          rg ? ms(median(tm.base)) : '-', rg ? ms(median(tm.baseOneCore)) : '-', rg ? ratio(median(tm.ours) / median(tm.base)) : '-'];
      }),
    );
    result(`first regex call on the store (${REGEX_CASES[0]?.pattern}), building the blob filters`, `${ms(coldMs)}: ${cold.scan?.messages?.blobsRead ?? 0} blobs read and summarised, ${mb(fs.statSync(path.join(stage.home, BLOB_GRAMS_FILE)).size)} of filters`);
    // lcm_grep tests a recurring blob once per call: say how much that applies to this corpus.
    const blobs = queryRows(s.store.db, 'SELECT count(*) AS n, count(DISTINCT blob) AS d FROM events WHERE blob IS NOT NULL')[0];
    const [large, distinct] = [Number(blobs?.n ?? 0), Number(blobs?.d ?? 0)];
    note(`${large.toLocaleString('en-US')} large events hold ${distinct.toLocaleString('en-US')} distinct blobs; lcm_grep reads and tests each distinct blob once per call, rg reads every file.${distinct < large ? ' Where copies share a large output, that flatters lcm_grep against rg.' : ''}`);
    const withLiteral = regexRows.filter((r) => r.literal);
    if (rg) {
      const geo = (rows: RegexRow[], f: (r: RegexRow) => number) => Math.exp(rows.reduce((a, r) => a + Math.log(f(r)), 0) / rows.length);
      const worst = Math.max(...withLiteral.map((r) => median(r.tm.ours) / median(r.tm.base)));
      const g = geo(withLiteral, (r) => median(r.tm.ours) / median(r.tm.base));
      const gDefault = geo(withLiteral, (r) => median(r.tm.oursDefault) / median(r.tm.base));
      result('regex with a literal: geo-mean ours / rg', ratio(g), '≤ 1.00×', g <= 1);
      result('regex with a literal: worst pattern ours / rg', ratio(worst), '≤ 1.00×', worst <= 1);
      result('  default call (recency, limit 50) / rg, geo-mean', ratio(gDefault));
      result('  ours / rg -j1 (one core each), geo-mean', ratio(geo(withLiteral, (r) => median(r.tm.ours) / median(r.tm.baseOneCore))));
      ctx.verdicts.push([`${label}lcm_grep regex ≤ 1× rg, worst literal pattern`, worst <= 1]);
      ratios.regexGeo = g;
      ratios.regexWorst = worst;
    } else {
      note('ripgrep not found: the regex comparison was skipped');
    }

    console.log('');
    note(`full_text: ours = lcm_grep tool (mode full_text, scope messages, allConversations, sort relevance, limit 50); default = scope both, sort recency; scorer = searchFts alone, unfiltered (what lcm_grep now runs for all conversations, before dropping Recollect's own log); fts5 = one native statement (bm25 + snippet + columns, ORDER BY rank LIMIT 50) over the same ${events.toLocaleString('en-US')} rows, copied in ${ms(fts5Ms)}. p50 of ${rounds + 2} runs.`);
    note(`ours and scorer run where the process holds the document lengths (src/core/search/docLengths.ts: loaded at the search after its searches of the table joined half its rows, as here during the first query's warm-up); joined = the scorer joining %_docsize instead, as a process answering one call (recollect tool) or a fresh one runs it.`);
    table(
      ['query', 'hits', 'fts5 hits', 'ours', 'default', 'scorer', 'joined', 'fts5', 'ours/fts5'],
      ftRows.map(({ q, tm, info, fts5Count }) => [q, `${info.count ?? 0}${info.truncated ? '+' : ''}`, fts5Count, ms(median(tm.ours)), ms(median(tm.oursDefault)), ms(median(tm.scorer)), ms(median(lengths.joined.get(q) ?? [NaN])), ms(median(tm.base)), ratio(median(tm.ours) / median(tm.base))]),
    );
    const pooled = (f: (r: FullTextRow) => number[]) => median(ftRows.flatMap(f));
    const ftRatio = pooled((r) => r.tm.ours) / pooled((r) => r.tm.base);
    const ftGeo = Math.exp(ftRows.reduce((a, r) => a + Math.log(median(r.tm.ours) / median(r.tm.base)), 0) / ftRows.length);
    result('full_text p50 ours / FTS5 (all queries pooled)', `${ms(pooled((r) => r.tm.ours))} / ${ms(pooled((r) => r.tm.base))} = ${ratio(ftRatio)}`, '≤ 1.50×', ftRatio <= 1.5);
    result('  geo-mean of per-query ratios', ratio(ftGeo), '≤ 1.50×', ftGeo <= 1.5);
    result('  scorer alone / FTS5', ratio(pooled((r) => r.tm.scorer) / pooled((r) => r.tm.base)));
    result('  scorer joining %_docsize / FTS5 (a one-call process)', ratio(median([...lengths.joined.values()].flat()) / pooled((r) => r.tm.base)));
    result(`  loading the document lengths (once per process), ${lengths.held.toLocaleString('en-US')} docids`, ms(lengths.loadMs));
    ctx.verdicts.push([`${label}lcm_grep full_text p50 ≤ 1.5× FTS5`, ftRatio <= 1.5]);
    ratios.fullText = ftRatio;
    ratios.fts5Ms = fts5Ms;
    if (ctx.diag) {
      await regexDiag(s, REGEX_CASES.map((c) => c.pattern));
      await fullTextDiag(s, FULL_TEXT_QUERIES);
    }
    return ratios;
  } finally {
    fts5?.close();
    s.store.close();
  }
}

function buildFts5(s: Services, file: string): NativeDatabase {
  fs.rmSync(file, { force: true }); // a --reuse run's copy from before
  const db = new BetterSqlite3(file);
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(terms, body UNINDEXED, created_at UNINDEXED, scope UNINDEXED, session_id UNINDEXED, kind UNINDEXED, tokenize = "ascii")`);
  const insert = db.prepare('INSERT INTO t(rowid, terms, body, created_at, scope, session_id, kind) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const stmt = s.store.db.prepare(`SELECT docid, terms, body, created_at, scope, session_id, kind FROM ${HISTORY_FTS}`);
  db.exec('BEGIN');
  try {
    while (stmt.step()) insert.run(...stmt.get());
    db.exec('COMMIT');
  } finally {
    stmt.free();
  }
  return db;
}

function findRipgrep(): string | undefined {
  for (const c of ['/usr/bin/rg', '/usr/local/bin/rg', 'rg']) {
    if (spawnSync(c, ['--version']).status === 0) return c;
  }
  return undefined;
}

/** rg -c over the folder; returns the total count of matching lines. */
function runRg(rg: string, args: string[], root: string, extra: string[]): number {
  const r = spawnSync(rg, ['-c', '--no-messages', ...extra, ...args.slice(0, -1), '-e', args.at(-1) as string, root], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`rg failed: ${r.stderr}`);
  let n = 0;
  for (const line of r.stdout.split('\n')) {
    const i = line.lastIndexOf(':');
    if (i > 0) n += Number(line.slice(i + 1));
  }
  return n;
}

/** --diag: where one full regex scan spends its time, by exclusive-time frames around LcmGrep's steps. */
export async function regexDiag(s: Services, patterns: readonly string[]): Promise<void> {
  const { Profiler } = await import('./profiler');
  const grepper = (s.lcm as unknown as { grepper: object }).grepper;
  heading('diagnosis: lcm_grep regex, one full scan per pattern (exclusive time per step)');
  const rows: (string | number)[][] = [];
  for (const pattern of patterns) {
    const prof = new Profiler();
    const restore = new Map<object, Record<string, unknown>>();
    const wrap = (obj: object, key: string, name: string) => {
      const saved = restore.get(obj) ?? {};
      saved[key] = (obj as Record<string, unknown>)[key];
      restore.set(obj, saved);
      prof.wrapSync(obj, key, name);
    };
    wrap(grepper, 'regex', 'total');
    wrap(grepper, 'scan', 'scan: candidate SQL + regex loop');
    wrap(grepper, 'texts', 'texts: fetch rows');
    // Blobs the read-ahead worker decoded do not pass through blobs.get: this counts the main thread's own reads.
    wrap(s.store.blobs, 'get', 'blob reads');
    wrap(grepper, 'present', 'present');
    const t = nowMs();
    await lcmGrepTool.run(lcmGrepTool.input.parse({ pattern, mode: 'regex', scope: 'messages', allConversations: true, sort: 'relevance', limit: 200 }), s, CTX);
    const wall = nowMs() - t;
    for (const [obj, saved] of restore) for (const [k, v] of Object.entries(saved)) (obj as Record<string, unknown>)[k] = v;
    const f = prof.toJSON();
    const g = (k: string) => ms(f[k]?.ms ?? 0);
    rows.push([pattern, ms(wall), g('scan: candidate SQL + regex loop'), g('texts: fetch rows'), `${g('blob reads')} (${f['blob reads']?.calls ?? 0})`, g('present'), g('total')]);
  }
  table(['pattern', 'tool wall', 'scan (SQL ids + regex)', 'texts SQL', 'blob reads on main (n)', 'present', 'rest of regex()'], rows);
}

/** --diag: one full_text call per query, split into the scorer, the excerpts and the presentation. */
export async function fullTextDiag(s: Services, queries: readonly string[]): Promise<void> {
  const { Profiler } = await import('./profiler');
  const { snippets } = await import('../src/core/search/ftsSearch');
  const grepper = (s.lcm as unknown as { grepper: object }).grepper;
  heading('diagnosis: lcm_grep full_text (scope messages, all conversations, relevance, limit 50), p50 of 5');
  const rows: (string | number)[][] = [];
  for (const q of queries) {
    const match = parseMatchQuery(q)?.match ?? q;
    const walls: number[] = [];
    const presents: number[] = [];
    const scorer: number[] = [];
    const snips: number[] = [];
    for (let r = 0; r < 5; r++) {
      const prof = new Profiler();
      const saved = (grepper as Record<string, unknown>).present;
      prof.wrapSync(grepper, 'present', 'present');
      let t = nowMs();
      await lcmGrepTool.run(lcmGrepTool.input.parse({ pattern: q, mode: 'full_text', scope: 'messages', allConversations: true, sort: 'relevance', limit: 50 }), s, CTX);
      walls.push(nowMs() - t);
      (grepper as Record<string, unknown>).present = saved;
      presents.push(prof.toJSON().present?.ms ?? 0);
      t = nowMs();
      const found = searchFts(s.store.db, HISTORY_FTS, { query: q, limit: 50 + 500, sort: 'relevance', now: Date.now() });
      scorer.push(nowMs() - t);
      const ids = found.ok ? found.hits.slice(0, 50).map((h) => h.docid) : [];
      t = nowMs();
      snippets(s.store.db, HISTORY_FTS, match, ids, 24);
      snips.push(nowMs() - t);
    }
    rows.push([q, ms(median(walls)), ms(median(scorer)), ms(median(snips)), ms(median(presents)), ms(Math.max(0, median(walls) - median(scorer) - median(snips) - median(presents)))]);
  }
  table(['query', 'tool wall', 'searchFts (limit 550)', 'snippets(50, 24 tok)', 'present', 'rest (≈)'], rows);
  console.log('');
  note('one full_text call per query and one regex full scan per pattern, time inside SQLite per statement:');
  const { sqlProfile } = await import('./sqlProfile');
  const sql = sqlProfile(s.store.db);
  try {
    for (const q of queries) await lcmGrepTool.run(lcmGrepTool.input.parse({ pattern: q, mode: 'full_text', scope: 'messages', allConversations: true, sort: 'relevance', limit: 50 }), s, CTX);
    for (const c of REGEX_CASES) await lcmGrepTool.run(lcmGrepTool.input.parse({ pattern: c.pattern, mode: 'regex', scope: 'messages', allConversations: true, sort: 'relevance', limit: 200 }), s, CTX);
  } finally {
    sql.stop();
  }
  sql.print(12);
}

/**
 * The scorer as a process that holds no document lengths runs it (each run starts from nothing
 * held), and what loading them costs once their pages are in memory. Runs after every other
 * timing: it leaves the lengths held, as the measured calls found them.
 */
function timeDocLengths(s: Services, queries: readonly string[], runs: number): { joined: Map<string, number[]>; loadMs: number; held: number } {
  const db = s.store.db;
  const joined = new Map<string, number[]>();
  for (const q of queries) {
    const times: number[] = [];
    for (let r = 0; r < runs; r++) {
      forgetLengths(db, HISTORY_FTS);
      const t0 = nowMs();
      searchFts(db, HISTORY_FTS, { query: q, limit: 50, sort: 'relevance', now: Date.now() });
      times.push(nowMs() - t0);
    }
    joined.set(q, times);
  }
  forgetLengths(db, HISTORY_FTS);
  const totals = queryScalar(db, `SELECT value FROM ${HISTORY_FTS}_stat WHERE id = 0`);
  const docs = Number(queryScalar(db, `SELECT count(*) FROM ${HISTORY_FTS}_docsize`));
  noteJoinedRows(db, HISTORY_FTS, docs, docs, totals instanceof Uint8Array ? statColumns(totals) : 0);
  const t0 = nowMs();
  const held = heldLengths(db, HISTORY_FTS);
  const loadMs = nowMs() - t0;
  if (!held) throw new Error('the document lengths did not load');
  return { joined, loadMs, held: held.length };
}
