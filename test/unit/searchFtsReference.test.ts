import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY_FTS } from '../../src/core/memory/memorySchema';
import { createFtsTableSql, searchFts, type SearchRequest } from '../../src/core/search/ftsSearch';
import { bm25, idf, sortValue, topK, type Ranked } from '../../src/core/search/rank';
import type { Services } from '../../src/core/services';
import { loadSqlJs, queryRows, queryScalar, type Database } from '../../src/core/store/sqlite';
import { analyze } from '../../src/core/text/analyzer';
import { openTemp, WASM_PATH } from './helpers/tempStore';

/**
 * searchFts against BM25 computed the slow, obvious way: every match read row by row with its
 * own matchinfo 'pcyl' (document length from 'l', not the %_docsize join), N and the average
 * length from a separate 'pcnax' statement, and each phrase's document count from a count(*)
 * of that phrase alone — so the statistics the matching pass gathers for several phrases are
 * checked against numbers it did not produce.
 */
let s: Services;
let clock = Date.parse('2026-10-01T08:00:00Z');
const WORDS = ['vite', 'build', 'cache', 'deploy', 'review', 'schema', 'index', 'token', 'budget', 'release', 'alpha', 'omega', 'queue', 'worker'];

beforeAll(async () => {
  s = await openTemp(undefined, () => clock);
  for (let i = 0; i < 90; i++) {
    clock += 3_600_000;
    // Lengths, repeats and word pairs vary so scores differ, and some rows tie.
    const words = Array.from({ length: 2 + ((i * 7) % 13) }, (_, k) => WORDS[(i * 3 + k * k + (k % 3)) % WORDS.length] as string);
    const text = `${words.join(' ')}${i % 5 ? ' build cache' : ''}${i % 7 === 0 ? ' vite vite' : ''}`;
    await s.memory.remember({ statement: text, scope: i % 3 ? 'project:webapp' : undefined }, 'vitest');
  }
});
afterAll(() => s.store.close());

const QUERIES = ['build cache', 'vite build', '"build cache" review', 'alpha omega queue', 'rev* token', 'schema "index token"', 'worker deploy budget release', 'vite', 'nothing here'];

function reference(db: Database, req: SearchRequest, table = MEMORY_FTS): { hits: Ranked[]; total: number } {
  // Each word or quoted run in the index's spelling (a prefix folded, not stemmed): the analyzer is tested on its own.
  const phrases = (req.query.match(/"[^"]*"|[^\s"]+/g) ?? []).map((p) => (p.endsWith('*') ? `"${p.slice(0, -1).toLowerCase()}*"` : `"${analyze(p.replace(/"/g, ''))}"`));
  const match = phrases.join(req.anyPhrase ? ' OR ' : ' ');
  const header = queryScalar(db, `SELECT hex(matchinfo(${table}, 'pcnax')) FROM ${table} WHERE ${table} MATCH ? LIMIT 1`, [match]);
  if (typeof header !== 'string') return { hits: [], total: 0 };
  const u32 = (hex: string, i: number) => Buffer.from(hex.slice(i * 8, i * 8 + 8), 'hex').readUInt32LE(0);
  const stats = {
    totalDocs: u32(header, 2),
    avgDocLength: u32(header, 3),
    docsWithPhrase: phrases.map((p) => Number(queryScalar(db, `SELECT count(*) FROM ${table} WHERE ${table} MATCH ?`, [p]))),
  };
  const idfs = idf(stats);
  const rows = queryRows(db, `SELECT docid, created_at, scope, hex(matchinfo(${table}, 'pcyl')) AS mi FROM ${table} WHERE ${table} MATCH ?`, [match]);
  const ranked: Ranked[] = [];
  for (const r of rows) {
    const docid = Number(r.docid);
    const at = Number(r.created_at);
    if (req.scope !== undefined && r.scope !== req.scope) continue;
    if (req.since !== undefined && at < req.since) continue;
    if (req.before !== undefined && at >= req.before) continue;
    if (req.minDocid !== undefined && docid < req.minDocid) continue;
    const hex = String(r.mi);
    const p = u32(hex, 0);
    const c = u32(hex, 1);
    const tf = Array.from({ length: p }, (_, i) => u32(hex, 2 + i * c));
    const score = bm25(tf, u32(hex, 2 + p * c), idfs, stats.avgDocLength);
    ranked.push({ docid, bm25: score, createdAt: at, score: sortValue(req.sort ?? 'relevance', score, at, req.now) });
  }
  return { hits: topK(ranked, req.limit), total: ranked.length };
}

describe('searchFts equals a row-by-row BM25 reference', () => {
  it('for one and several phrases, AND and OR, every sort, filters and docid bounds', () => {
    const db = s.store.db;
    const start = Date.parse('2026-10-01T08:00:00Z');
    let compared = 0;
    let multiPhraseHits = 0;
    for (const query of QUERIES)
      for (const sort of ['relevance', 'recency', 'hybrid'] as const)
        for (const variant of [{}, { scope: 'project:webapp' }, { since: start + 20 * 3_600_000, before: start + 70 * 3_600_000 }, { minDocid: 30 }, { anyPhrase: true }])
          for (const limit of [1, 4, 25]) {
            const req: SearchRequest = { query, limit, sort, now: clock, ...variant };
            const got = searchFts(db, MEMORY_FTS, req);
            if (!got.ok) throw new Error(got.reason);
            const want = reference(db, req);
            expect({ hits: got.hits, total: got.total }, JSON.stringify(req)).toEqual(want);
            compared++;
            if (query.includes(' ') && !query.startsWith('"')) multiPhraseHits += got.hits.length;
          }
    expect(compared).toBe(QUERIES.length * 3 * 5 * 3);
    expect(multiPhraseHits).toBeGreaterThan(300);
  });

  it('with each phrase\'s document count given (docsWithPhrase), the same answer; with wrong counts, another', () => {
    const db = s.store.db;
    const start = Date.parse('2026-10-01T08:00:00Z');
    const counted = (query: string) => (query.match(/"[^"]*"|[^\s"]+/g) ?? []).map((p) => Number(queryScalar(db, `SELECT count(*) FROM ${MEMORY_FTS} WHERE ${MEMORY_FTS} MATCH ?`, [p.endsWith('*') ? `"${p.slice(0, -1).toLowerCase()}*"` : `"${analyze(p.replace(/"/g, ''))}"`])));
    let compared = 0;
    for (const query of QUERIES.filter((q) => q !== 'nothing here'))
      for (const variant of [{ anyPhrase: true }, { anyPhrase: true, scope: 'project:webapp' }, { anyPhrase: true, minDocid: 30 }, { since: start + 20 * 3_600_000 }, {}])
        for (const limit of [1, 25]) {
          const req: SearchRequest = { query, limit, sort: 'relevance', now: clock, ...variant };
          const counts = counted(query);
          const got = searchFts(db, MEMORY_FTS, { ...req, docsWithPhrase: counts });
          if (!got.ok) throw new Error(got.reason);
          expect({ hits: got.hits, total: got.total }, JSON.stringify(req)).toEqual(reference(db, req));
          // Rows holding every phrase among the any-phrase matches: the every-phrase search's own count.
          if (req.anyPhrase && !query.includes('*')) {
            const strict = searchFts(db, MEMORY_FTS, { ...req, anyPhrase: false });
            expect(got.ok && got.holdingEvery, JSON.stringify(req)).toBe(strict.ok && strict.total);
          }
          compared++;
        }
    expect(compared).toBe(8 * 5 * 2);
    // The counts are used, not checked against 'x': off by a few, the several-phrase scores move.
    const req: SearchRequest = { query: 'alpha omega queue', limit: 25, sort: 'relevance', now: clock, anyPhrase: true, scope: 'project:webapp' };
    const wrong = searchFts(db, MEMORY_FTS, { ...req, docsWithPhrase: counted(req.query).map((n) => n + 7) });
    expect(wrong.ok && wrong.hits.map((h) => h.bm25)).not.toEqual(reference(db, req).hits.map((h) => h.bm25));
    // Counts that do not fit the expression (another number of phrases) are not used.
    const misfit = searchFts(db, MEMORY_FTS, { ...req, docsWithPhrase: [1] });
    expect(misfit.ok && misfit.hits).toEqual(reference(db, req).hits);
  });

  it('with hundreds of rows tied at the cut (copies of one message), decided by created_at then docid, with and without columns', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    for (const fraction of [0, 0.5]) {
      const db = new SQL.Database();
      try {
        db.exec(createFtsTableSql('t', ['ref']));
        db.exec('BEGIN');
        for (let i = 1; i <= 1500; i++) {
          // Every fourth row is the same short message at one of 30 times, so its copies tie on score and
          // often on created_at; the rest vary in length. With `fraction`, some times are not whole numbers.
          const copy = i % 4 === 0;
          const body = copy ? 'alpha beta' : `alpha ${'gamma '.repeat(i % 9)}beta ${i % 3 ? 'delta' : 'alpha'}`;
          const at = 1_700_000_000_000 + (copy ? (i % 30) * 60_000 : i * 1000) + (i % 7 === 0 ? fraction : 0);
          db.run('INSERT INTO t (docid, terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?, ?)', [i, analyze(body), body, i === 8 ? null : at, 'global', `r${i}`]);
        }
        db.exec('COMMIT');
        for (const query of ['alpha', 'alpha beta', 'beta alpha', 'gamma'])
          for (const limit of [1, 50, 120])
            for (const columns of [undefined, ['body', 'ref']]) {
              const req: SearchRequest = { query, limit, sort: 'relevance', now: Date.now(), ...(columns ? { columns } : {}) };
              const got = searchFts(db, 't', req);
              if (!got.ok) throw new Error(got.reason);
              const want = reference(db, req, 't');
              expect({ hits: got.hits, total: got.total }, `${query} ${limit} ${fraction} ${columns?.join(',') ?? ''}`).toEqual(want);
              if (columns) for (const h of got.hits) expect(got.rows?.get(h.docid)?.ref).toBe(`r${h.docid}`);
            }
        // The case this test is for: far more rows tie at the cut than are shown.
        const cut = searchFts(db, 't', { query: 'alpha beta', limit: 50, sort: 'relevance', now: Date.now() });
        expect(cut.ok && cut.hits.every((h) => h.bm25 === cut.hits[0]?.bm25)).toBe(true);
        expect(Number(queryScalar(db, "SELECT count(*) FROM t WHERE t MATCH 'alpha beta' AND body = 'alpha beta'"))).toBe(375);
      } finally {
        db.close();
      }
    }
  });
});
