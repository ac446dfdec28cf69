import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import BetterSqlite3, { type Database as NativeDatabase } from 'better-sqlite3';
import type { Services } from '../src/core/services';
import { MEMORY_FTS } from '../src/core/memory/memorySchema';
import { bodiesOf } from '../src/core/search/excerpts';
import { excerptsOf, searchFts, snippets } from '../src/core/search/ftsSearch';
import { phrasesOfMatch, snippetOf, termSnippetOf } from '../src/core/search/snippet';
import { CLOSE, ELLIPSIS, OPEN, originalShape, termShape } from '../test/unit/helpers/excerptCompare';
import { chunkRefs } from '../src/core/memory/recall/chunkRefs';
import { queryRows } from '../src/core/store/sqlite';
import { parseMatchQuery } from '../src/core/search/matchQuery';
import { QUERY_CLASSES, type BenchQuery } from './corpus';
import { referenceSearchFts } from './referenceScorer';
import { heading, median, ms, note, nowMs, percentile, progress, ratio, result, table } from './stats';

/** The same corpus in FTS5 (better-sqlite3, native SQLite), indexing the same analyzed terms column with the ascii tokenizer (FTS4 simple's counterpart), and as a text file for ripgrep. */
export interface Baselines {
  fts5: NativeDatabase;
  fts5File: string;
  textFile: string;
  rows: number;
  rg: string | undefined;
}

export function buildBaselines(services: Services, tmp: string): Baselines {
  const fts5File = path.join(tmp, 'fts5-baseline.sqlite');
  const textFile = path.join(tmp, 'corpus.txt');
  // --reuse keeps the stores of an earlier run; the baseline is rebuilt from what the store holds now
  fs.rmSync(fts5File, { force: true });
  const fts5 = new BetterSqlite3(fts5File);
  fts5.exec(`CREATE VIRTUAL TABLE t USING fts5(terms, body UNINDEXED, created_at UNINDEXED, scope UNINDEXED, ref UNINDEXED, tokenize = "ascii")`);
  const insert = fts5.prepare('INSERT INTO t(rowid, terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?, ?)');
  const out = fs.openSync(textFile, 'w');
  const stmt = services.store.db.prepare(`SELECT docid, terms, body, created_at, scope, ref FROM ${MEMORY_FTS} ORDER BY docid`);
  let rows = 0;
  let buffered: string[] = [];
  const flush = () => {
    fs.writeSync(out, buffered.join(''));
    buffered = [];
  };
  fts5.exec('BEGIN');
  try {
    while (stmt.step()) {
      const [docid, terms, body, createdAt, scope, ref] = stmt.get();
      insert.run(docid, terms, body, createdAt, scope, ref);
      buffered.push(String(body).replace(/[\r\n]+/g, ' ') + '\n');
      if (buffered.length >= 5000) flush();
      rows++;
    }
    flush();
    fts5.exec('COMMIT');
  } finally {
    stmt.free();
    fs.closeSync(out);
  }
  return { fts5, fts5File, textFile, rows, rg: findRipgrep() };
}

function findRipgrep(): string | undefined {
  for (const c of ['/usr/bin/rg', '/usr/local/bin/rg', 'rg']) {
    const r = spawnSync(c, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return c;
  }
  return undefined;
}

/** FTS4 MATCH text → FTS5 query text: a prefix phrase is `"word"*` in FTS5, `"word*"` in FTS4. */
export function fts5Query(match: string): string {
  return match.replace(/\*"/g, '" *');
}

interface PerQuery {
  q: BenchQuery;
  match: string;
  total: number;
  fts5Total: number;
  service: number[];
  scorer: number[];
  before: number[];
  fts5Full: number[];
  fts5Rank: number[];
  rg: number[];
  overlap: number;
  orderSame: number;
  /** The same, judged by FTS5's own scores: a different document with an equal score is a tie, not a difference. */
  overlapTies: number;
  orderTies: number;
  parts: { rows: number[]; excerpts: number[]; chunks: number[]; index: number[]; warm: number[] };
  maxRelDiff: number;
}

export interface SearchSummary {
  p50Service: number;
  p50Scorer: number;
  p50Before: number;
  identical: number;
  cases: number;
  excerptsSame: number;
  excerpts: number;
  overlapTies: number;
  p50Fts5: number;
  p50Fts5Rank: number;
  overlap: number;
}

export function runSearchBench(services: Services, base: Baselines, queries: BenchQuery[], rounds: number): { summary: SearchSummary; print: () => void } {
  const { fts5 } = base;
  const db = () => services.store.db;
  const rankStmt = fts5.prepare('SELECT rowid, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY rank LIMIT 20');
  // One statement, as a native FTS5 user would write it: rank, excerpt and stored columns of the top 20.
  const fullStmt = fts5.prepare(
    `SELECT rowid, bm25(t) AS score, snippet(t, 0, '[', ']', '…', 16) AS snippet, body, ref, scope, created_at FROM t WHERE t MATCH ? ORDER BY rank LIMIT 20`,
  );
  const countStmt = fts5.prepare('SELECT count(*) FROM t WHERE t MATCH ?').pluck();
  const now = Date.parse('2026-01-02T00:00:00Z');

  const per: PerQuery[] = queries.map((q) => {
    const parsed = parseMatchQuery(q.text);
    if (!parsed) throw new Error(`bench query "${q.text}" does not parse`);
    return { q, match: parsed.match, total: 0, fts5Total: Number(countStmt.get(fts5Query(parsed.match))), service: [], scorer: [], before: [], fts5Full: [], fts5Rank: [], rg: [], overlap: 0, orderSame: 0, overlapTies: 0, orderTies: 0, parts: { rows: [], excerpts: [], chunks: [], index: [], warm: [] }, maxRelDiff: 0 };
  });

  // Correctness first: same matches, same top 20, same scores (within float noise).
  for (const p of per) {
    const ours = searchFts(db(), MEMORY_FTS, { query: p.q.text, limit: 20, sort: 'relevance', now });
    if (!ours.ok) throw new Error(ours.reason);
    p.total = ours.total;
    const theirs = rankStmt.all(fts5Query(p.match)) as { rowid: number; score: number }[];
    const a = ours.hits.map((h) => h.docid);
    const b = theirs.map((r) => r.rowid);
    const setB = new Set(b);
    const common = a.filter((d) => setB.has(d)).length;
    p.overlap = a.length || b.length ? common / Math.max(a.length, b.length) : 1;
    p.orderSame = a.filter((d, i) => b[i] === d).length / Math.max(1, a.length, b.length);
    const theirScore = new Map(theirs.map((r) => [r.rowid, -r.score]));
    for (const h of ours.hits) {
      const t = theirScore.get(h.docid);
      if (t !== undefined) p.maxRelDiff = Math.max(p.maxRelDiff, Math.abs(h.bm25 - t) / Math.max(1e-12, Math.abs(t)));
    }
    const scoreOf = new Map<number, number>(
      (fts5.prepare(`SELECT rowid, bm25(t) AS score FROM t WHERE t MATCH ? AND rowid IN (${a.map(() => '?').join(',') || 'NULL'})`).all(fts5Query(p.match), ...a) as { rowid: number; score: number }[]).map((r) => [r.rowid, r.score]),
    );
    const ourScores = a.map((d) => scoreOf.get(d) ?? NaN);
    const theirScores = theirs.map((r) => r.score);
    const same = (x: number | undefined, y: number | undefined) => x !== undefined && y !== undefined && Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y));
    const n = Math.max(1, a.length, b.length);
    const sortedOurs = [...ourScores].sort((x, y) => x - y);
    p.overlapTies = a.length || b.length ? sortedOurs.filter((x, i) => same(x, theirScores[i])).length / n : 1;
    p.orderTies = a.length || b.length ? ourScores.filter((x, i) => same(x, theirScores[i])).length / n : 1;
  }

  // The scorer must rank exactly as the reference (first) implementation did, for every sort and filter.
  let identical = 0;
  let cases = 0;
  const firstDiff: string[] = [];
  for (const p of per) {
    for (const sort of ['relevance', 'hybrid', 'recency'] as const) {
      for (const scope of [undefined, 'project:webapp']) {
        for (const limit of [20, 5]) {
          const req = { query: p.q.text, limit, sort, scope, now };
          const a = searchFts(db(), MEMORY_FTS, req);
          const b = referenceSearchFts(db(), MEMORY_FTS, req);
          cases++;
          const same = JSON.stringify(a) === JSON.stringify(b);
          if (same) identical++;
          else if (firstDiff.length < 3) firstDiff.push(`${JSON.stringify(req)}: ${JSON.stringify(a).slice(0, 160)} vs ${JSON.stringify(b).slice(0, 160)}`);
        }
      }
    }
  }
  for (const d of firstDiff) progress(`ranking differs from the reference: ${d}`);

  // The excerpts are built in JavaScript by FTS4's rules over the original text. SQLite's own
  // snippet() can only show the indexed terms column, so each shown hit is checked two ways:
  // the same rules over its terms column give exactly SQLite's snippet() of that column, and
  // the excerpt shown, analyzed again, has SQLite's fragments, highlights and ellipses.
  let excerptsSame = 0;
  let excerpts = 0;
  for (const p of per) {
    const top = searchFts(db(), MEMORY_FTS, { query: p.q.text, limit: 20, sort: 'relevance', now });
    const ids = top.ok ? top.hits.map((h) => h.docid) : [];
    const ours = snippets(db(), MEMORY_FTS, p.match, ids, 16);
    const marked = new Map([...bodiesOf(db(), MEMORY_FTS, ids)].map(([id, t]) => [id, snippetOf(t, phrasesOfMatch(p.match), 16, OPEN, CLOSE, ELLIPSIS)]));
    const theirs = queryRows(db(), `SELECT docid, terms, snippet(${MEMORY_FTS}, '${OPEN}', '${CLOSE}', '${ELLIPSIS}', 0, 16) AS s FROM ${MEMORY_FTS} WHERE ${MEMORY_FTS} MATCH ? AND docid IN (${ids.map(() => '?').join(',') || 'NULL'})`, [p.match, ...ids]);
    for (const r of theirs) {
      excerpts++;
      const want = String(r.s);
      const shown = marked.get(Number(r.docid)) ?? '';
      const rules = termSnippetOf(String(r.terms), phrasesOfMatch(p.match), 16, OPEN, CLOSE, ELLIPSIS);
      const sameShape = JSON.stringify(originalShape(shown)) === JSON.stringify(termShape(want));
      // The shown excerpt is the marked one with the tool's markers.
      const sameShown = ours.get(Number(r.docid)) === shown.replaceAll(OPEN, '[').replaceAll(CLOSE, ']').replaceAll(ELLIPSIS, '…');
      if (rules === want && sameShape && sameShown) excerptsSame++;
      else if (firstDiff.length < 6) firstDiff.push(`excerpt of ${String(r.docid)} for ${p.match}: ${JSON.stringify(ours.get(Number(r.docid)))} vs SQLite's snippet() of the terms ${JSON.stringify(want)} (rules over the terms ${JSON.stringify(rules)})`);
    }
  }
  if (excerptsSame !== excerpts) progress(`excerpts differ from SQLite's snippet() of the terms column: ${firstDiff.slice(-1)[0] ?? ''}`);

  progress(`search: ${per.length} queries × ${rounds} rounds × 5 paths (+ ripgrep)`);
  // Warm-up, then interleaved rounds so drift (GC, CPU frequency) hits every path alike.
  // The order of the paths rotates from one query and round to the next, so the garbage one
  // path leaves behind (the service's token counting allocates a lot) is not always collected
  // during the same other path.
  type Path = 'service' | 'scorer' | 'before' | 'fts5Full' | 'fts5Rank';
  const paths: [Path, (p: PerQuery, q5: string) => unknown][] = [
    ['service', (p) => {
      const r = services.memory.searchText({ query: p.q.text, top_k: 20, sort: 'relevance' });
      if (!r.ok) throw new Error(`searchText refused "${p.q.text}"`);
    }],
    ['scorer', (p) => searchFts(db(), MEMORY_FTS, { query: p.q.text, limit: 20, sort: 'relevance', now })],
    ['before', (p) => referenceSearchFts(db(), MEMORY_FTS, { query: p.q.text, limit: 20, sort: 'relevance', now })],
    ['fts5Full', (_p, q5) => fullStmt.all(q5)],
    ['fts5Rank', (_p, q5) => rankStmt.all(q5)],
  ];
  for (let round = -1; round < rounds; round++) {
    for (const [qi, p] of per.entries()) {
      const q5 = fts5Query(p.match);
      for (let k = 0; k < paths.length; k++) {
        const [name, run] = paths[(k + qi + Math.max(0, round)) % paths.length]!;
        const t = nowMs();
        run(p, q5);
        const dt = nowMs() - t;
        if (round >= 0) p[name].push(dt);
      }
    }
    if (round >= 0 && (round + 1) % 3 === 0) progress(`search: round ${round + 1}/${rounds}`);
  }
  // Where search_text's time goes: each step it takes, as it takes them, timed on its own.
  for (let round = 0; round < 3; round++) {
    for (const p of per) {
      let t = nowMs();
      const found = searchFts(db(), MEMORY_FTS, { query: p.q.text, limit: 20, sort: 'relevance', now, columns: ['body', 'ref', 'scope'] });
      p.parts.rows.push(nowMs() - t);
      if (!found.ok) continue;
      const docids = found.hits.map((h) => h.docid);
      const texts = new Map(docids.map((d) => [d, String(found.rows?.get(d)?.body ?? '')]));
      t = nowMs();
      excerptsOf(found.match, texts, 16);
      p.parts.excerpts.push(nowMs() - t);
      t = nowMs();
      // As searchText does: only note chunks (ref note:…) are looked up.
      chunkRefs(db(), docids.filter((d) => String(found.rows?.get(d)?.ref ?? '').startsWith('note:')));
      p.parts.chunks.push(nowMs() - t);
      t = nowMs();
      services.memory.vault.index();
      p.parts.index.push(nowMs() - t);
      // The whole call again, now that the steps above have run on this query: its data is warm
      // in the CPU caches as it is for every step timed here, where in the rounds the service
      // runs after another query or FTS5 (the scorer, timed right after it, is warm there too).
      t = nowMs();
      services.memory.searchText({ query: p.q.text, top_k: 20, sort: 'relevance' });
      p.parts.warm.push(nowMs() - t);
    }
  }
  if (base.rg) {
    for (let round = 0; round < 3; round++) {
      for (const p of per) {
        const word = (p.q.text.replace(/["*]/g, '').split(/\s+/)[0] ?? '').trim();
        const t = nowMs();
        spawnSync(base.rg, ['-c', '-i', '-F', word, base.textFile], { encoding: 'utf8' });
        p.rg.push(nowMs() - t);
      }
    }
  }

  const summary: SearchSummary = {
    p50Service: median(per.flatMap((p) => p.service)),
    p50Scorer: median(per.flatMap((p) => p.scorer)),
    p50Before: median(per.flatMap((p) => p.before)),
    identical,
    cases,
    excerptsSame,
    excerpts,
    p50Fts5: median(per.flatMap((p) => p.fts5Full)),
    p50Fts5Rank: median(per.flatMap((p) => p.fts5Rank)),
    overlap: per.reduce((a, p) => a + p.overlap, 0) / per.length,
    overlapTies: per.reduce((a, p) => a + p.overlapTies, 0) / per.length,
  };
  return { summary, print: () => printSearch(per, base, rounds, summary) };
}

function printSearch(per: PerQuery[], base: Baselines, rounds: number, summary: SearchSummary): void {
  heading(`3. search_text over ${base.rows.toLocaleString('en-US')} rows (sql.js FTS4 + JS BM25) vs better-sqlite3 FTS5`);
  note(`p50 of ${rounds} interleaved runs per query after one warm-up; sort=relevance, top_k=20; all warm, in-process.`);
  note('ours  = MemoryService.searchText (scorer reading the shown rows + excerpts + note chunks + vault staleness), the real tool path');
  note('score = searchFts alone (one matchinfo pass + JS BM25 + top-k); before = the first scorer (bench/referenceScorer.ts)');
  note('fts5  = SELECT rowid, bm25, snippet, body, ref, scope … ORDER BY rank LIMIT 20 (one native statement)');
  note('fts5r = SELECT rowid, bm25(t) … ORDER BY rank LIMIT 20 (rank only)');
  table(
    ['class', 'query', 'hits', 'ours', 'score', 'before', 'fts5', 'fts5r', 'rg', 'ours/fts5', 'top20 ∩', '∩ ties', 'order ties'],
    per.map((p) => [
      p.q.cls,
      p.q.text.length > 28 ? `${p.q.text.slice(0, 27)}…` : p.q.text,
      p.total === p.fts5Total ? p.total : `${p.total}≠${p.fts5Total}`,
      ms(median(p.service)),
      ms(median(p.scorer)),
      ms(median(p.before)),
      ms(median(p.fts5Full)),
      ms(median(p.fts5Rank)),
      p.rg.length ? ms(median(p.rg)) : '-',
      ratio(median(p.service) / median(p.fts5Full)),
      `${Math.round(p.overlap * 100)}%`,
      `${Math.round(p.overlapTies * 100)}%`,
      `${Math.round(p.orderTies * 100)}%`,
    ]),
  );

  console.log('');
  table(
    ['class', 'queries', 'ours p50', 'ours p95', 'score p50', 'before p50', 'fts5 p50', 'fts5 p95', 'ours/fts5 p50', 'score/fts5r p50'],
    QUERY_CLASSES.map((cls) => {
      const ps = per.filter((p) => p.q.cls === cls);
      const all = (k: 'service' | 'scorer' | 'before' | 'fts5Full' | 'fts5Rank') => ps.flatMap((p) => p[k]);
      return [
        cls,
        ps.length,
        ms(median(all('service'))),
        ms(percentile(all('service'), 95)),
        ms(median(all('scorer'))),
        ms(median(all('before'))),
        ms(median(all('fts5Full'))),
        ms(percentile(all('fts5Full'), 95)),
        ratio(median(all('service')) / median(all('fts5Full'))),
        ratio(median(all('scorer')) / median(all('fts5Rank'))),
      ];
    }),
  );
  console.log('');
  note('where search_text goes, p50 per class: searchFts alone, then each step of MemoryService.searchText timed alone (+rows = searchFts reading body/ref/scope of the shown hits)');
  note('warm = search_text again right after its steps (warm caches, as each step and the scorer column are); rest = warm − the steps; the gap between search_text and warm is the cost of coming to a query cold');
  table(
    ['class', 'search_text', 'warm', 'searchFts', '+rows', 'excerpts', 'chunkRefs', 'vault index', 'rest', 'fts5'],
    QUERY_CLASSES.map((cls) => {
      const ps = per.filter((p) => p.q.cls === cls);
      const v = (f: (p: PerQuery) => number[]) => median(ps.flatMap(f));
      const m = (f: (p: PerQuery) => number[]) => ms(v(f));
      // What is left of the warm call (building the hits, garbage collection), by difference of medians.
      const rest = v((p) => p.parts.warm) - v((p) => p.parts.rows) - v((p) => p.parts.excerpts) - v((p) => p.parts.chunks) - v((p) => p.parts.index);
      return [cls, m((p) => p.service), m((p) => p.parts.warm), m((p) => p.scorer), m((p) => p.parts.rows), m((p) => p.parts.excerpts), m((p) => p.parts.chunks), m((p) => p.parts.index), `≈${ms(Math.max(0, rest))}`, m((p) => p.fts5Full)];
    }),
  );
  const pool = (k: 'service' | 'scorer' | 'fts5Full' | 'fts5Rank' | 'rg') => per.flatMap((p) => p[k]);
  const geo = (f: (p: PerQuery) => number) => Math.exp(per.reduce((a, p) => a + Math.log(f(p)), 0) / per.length);
  console.log('');
  result('search_text p50, all queries (ours)', ms(summary.p50Service));
  result('search_text p95, all queries (ours)', ms(percentile(pool('service'), 95)));
  result('FTS5 p50 / p95 (rank + snippet + content)', `${ms(summary.p50Fts5)} / ${ms(percentile(pool('fts5Full'), 95))}`);
  result('searchFts p50 (scorer alone)', ms(summary.p50Scorer));
  result('searchFts p50 before this change (reference)', ms(summary.p50Before));
  result('FTS5 rank-only p50', ms(summary.p50Fts5Rank));
  if (base.rg) result('ripgrep -c -i -F <first word> p50 (incl. spawn)', ms(median(pool('rg'))));
  else note('ripgrep not found: skipped');
  const r = summary.p50Service / summary.p50Fts5;
  result('search_text p50 ratio ours / FTS5', ratio(r), '≤ 1.50×', r <= 1.5);
  result('  geo-mean of per-query p50 ratios', ratio(geo((p) => median(p.service) / median(p.fts5Full))), '≤ 1.50×', geo((p) => median(p.service) / median(p.fts5Full)) <= 1.5);
  const rs = summary.p50Scorer / summary.p50Fts5Rank;
  result('scorer p50 ratio searchFts / FTS5 rank-only', ratio(rs), '≤ 1.50×', rs <= 1.5);
  result('ranking identical to the reference scorer', `${summary.identical}/${summary.cases} cases`, 'all', summary.identical === summary.cases);
  result('excerpts follow SQLite snippet() of the terms', `${summary.excerptsSame}/${summary.excerpts} top-20 hits`, 'all', summary.excerptsSame === summary.excerpts);
  const orderAll = per.reduce((a, p) => a + p.orderSame, 0) / per.length;
  result('top-20 overlap with FTS5 bm25, same documents (mean)', `${(summary.overlap * 100).toFixed(1)}%`);
  result('same position in top 20 (mean)', `${(orderAll * 100).toFixed(1)}%`);
  const ovT = per.reduce((a, p) => a + p.overlapTies, 0) / per.length;
  const orT = per.reduce((a, p) => a + p.orderTies, 0) / per.length;
  result('top-20 overlap counting equal FTS5 scores as ties', `${(ovT * 100).toFixed(1)}%`, '≈ 100%', ovT >= 0.95);
  result('same position up to ties (by FTS5 score)', `${(orT * 100).toFixed(1)}%`);
  note('score differences: FTS4 matchinfo \'a\' rounds the average length to an integer, FTS5 does not; ties are ordered newest-first here, by rowid in FTS5.');
  result('max relative score difference vs FTS5', Math.max(...per.map((p) => p.maxRelDiff)).toExponential(2));
  const mismatched = per.filter((p) => p.total !== p.fts5Total);
  result('queries whose match count differs from FTS5', String(mismatched.length), '0', mismatched.length === 0);
}
