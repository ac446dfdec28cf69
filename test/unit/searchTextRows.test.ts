import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY_FTS } from '../../src/core/memory/memorySchema';
import { searchFts, type SearchRequest } from '../../src/core/search/ftsSearch';
import { snippets } from '../../src/core/search/excerpts';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { openTemp } from './helpers/tempStore';

let s: Services;
let clock = Date.parse('2026-11-02T08:00:00Z');
const WORDS = ['vite', 'build', 'cache', 'deploy', 'review', 'café', 'naïve', 'schema', 'index', 'token', 'budget', 'release'];

beforeAll(async () => {
  s = await openTemp(undefined, () => clock);
  // Forty identical notes tie on every score: more rows reach the k-th score than the columns are read with.
  for (let i = 0; i < 40; i++) {
    clock += 60_000;
    await s.memory.remember({ statement: 'alpha beta gamma shared note', scope: i % 3 ? 'project:webapp' : undefined }, 'vitest');
  }
  for (let i = 0; i < 80; i++) {
    clock += 3_600_000;
    const words = Array.from({ length: 3 + (i % 9) }, (_, k) => WORDS[(i * 5 + k * 7) % WORDS.length] as string);
    const text = `Note ${i}: ${words.join(' ')}${i % 4 ? ' alpha' : ''}.`;
    if (i % 10 === 0) await s.memory.remember({ statement: text, subject: `thing ${i}`, predicate: 'uses', object: words[0] as string }, 'vitest');
    else await s.memory.remember({ statement: text, scope: i % 2 ? 'project:webapp' : undefined }, 'vitest');
  }
});
afterAll(() => s.store.close());

const QUERIES = ['alpha', 'alpha beta', '"beta gamma"', 'cafe', 'naive budget', 'rev*', 'build cache', 'token', 'nothingmatches'];

function requests(): SearchRequest[] {
  const out: SearchRequest[] = [];
  for (const query of QUERIES)
    for (const sort of ['relevance', 'recency', 'hybrid'] as const)
      for (const scope of [undefined, 'project:webapp'])
        for (const limit of [3, 20]) out.push({ query, limit, sort, now: clock, ...(scope ? { scope } : {}) });
  return out;
}

describe('search_text reads each shown row once', () => {
  it('searchFts with columns ranks exactly as without them and returns the stored columns of every hit and nothing else', () => {
    const db = s.store.db;
    let withRows = 0;
    for (const req of requests()) {
      const plain = searchFts(db, MEMORY_FTS, req);
      const read = searchFts(db, MEMORY_FTS, { ...req, columns: ['body', 'ref', 'scope'] });
      if (!plain.ok || !read.ok) throw new Error(`${req.query} refused`);
      expect(read.hits, JSON.stringify(req)).toEqual(plain.hits);
      expect(read.total).toBe(plain.total);
      expect('rows' in plain).toBe(false);
      const ids = plain.hits.map((h) => h.docid);
      const direct = queryRows(db, `SELECT docid, body, ref, scope FROM ${MEMORY_FTS} WHERE docid IN (${ids.join(',') || 'NULL'})`);
      expect([...(read.rows?.keys() ?? [])].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      for (const r of direct) expect(read.rows?.get(Number(r.docid))).toEqual({ body: r.body, ref: r.ref, scope: r.scope });
      withRows += ids.length;
    }
    expect(withRows).toBeGreaterThan(200);
  });

  it('the tie case is exercised: more rows share the k-th score than are read with created_at', () => {
    const found = searchFts(s.store.db, MEMORY_FTS, { query: 'gamma', limit: 3, sort: 'relevance', now: clock, columns: ['body'] });
    expect(found.ok && found.total).toBe(40);
    expect(found.ok && [...(found.rows?.values() ?? [])].map((r) => r.body)).toEqual(Array(3).fill('alpha beta gamma shared note'));
  });

  it('search_text answers with the texts, references and excerpts read straight from the table, every-word hits first, then partial ones', () => {
    const db = s.store.db;
    let hits = 0;
    let partial = 0;
    for (const query of QUERIES)
      for (const scope of [undefined, 'project:webapp'])
        for (const top_k of [3, 20]) {
          const r = s.memory.searchText({ query, top_k, ...(scope ? { scope } : {}) });
          if (!r.ok) throw new Error(r.reason);
          const found = searchFts(db, MEMORY_FTS, { query, limit: top_k, sort: 'relevance', now: clock, ...(scope ? { scope } : {}) });
          if (!found.ok) throw new Error(found.reason);
          const ids = found.hits.map((h) => h.docid);
          const rows = new Map(queryRows(db, `SELECT docid, body, ref, scope FROM ${MEMORY_FTS} WHERE docid IN (${ids.join(',') || 'NULL'})`).map((x) => [Number(x.docid), x]));
          const excerpts = snippets(db, MEMORY_FTS, found.match, ids, 16);
          expect(r.total).toBe(found.total);
          expect(r.hits.slice(0, ids.length).map((h) => [h.id, h.text, h.snippet, h.scope, h.matched])).toEqual(
            ids.map((id) => [String(rows.get(id)?.ref), String(rows.get(id)?.body), excerpts.get(id), String(rows.get(id)?.scope), 'all']),
          );
          const rest = r.hits.slice(ids.length);
          expect(rest.every((h) => h.matched === 'partial')).toBe(true);
          expect(r.hits.length).toBeLessThanOrEqual(top_k);
          hits += r.hits.length;
          partial += rest.length;
        }
    expect(hits).toBeGreaterThan(100);
    // "naive budget" and "build cache" have rows holding one of the words only.
    expect(partial).toBeGreaterThan(0);
  });
});
