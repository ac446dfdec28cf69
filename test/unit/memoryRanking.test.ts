import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY_FTS } from '../../src/core/memory/memorySchema';
import { byQuery, readAhead } from '../../src/core/memory/recall/getContext';
import { contentWords } from '../../src/core/memory/recall/queryWords';
import { keywordMatches, rankMemories, readAround } from '../../src/core/memory/recall/memoryRanking';
import { DocumentCounts } from '../../src/core/memory/recall/queryPruning';
import type { NearestHit } from '../../src/core/memory/semantic/semanticService';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { callTool as call } from './helpers/memoryCall';
import { openTemp } from './helpers/tempStore';

let s: Services;
beforeAll(async () => {
  s = await openTemp();
  const topics = ['staging deploy', 'billing database', 'login test', 'release notes', 'cache layer'];
  for (let i = 0; i < 60; i++) {
    await call(s, 'remember_note', { text: `Day log ${i}: the ${topics[i % 5]} came up while we talked about ${topics[(i * 3 + 1) % 5]}.` });
    if (i % 4 === 0) await call(s, 'remember', { statement: `fact ${i}`, subject: `service ${i}`, predicate: 'uses', object: topics[i % 5] as string });
  }
  // A vault note in several chunks, whose chunks are each other's neighbours.
  const file = path.join(s.store.home, 'vault', 'notes', 'ops.md');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, topics.map((t, i) => `## Part ${i}\n\n${`The ${t} runbook step ${i} says to check twice. `.repeat(30)}\n`).join('\n'));
  await call(s, 'index_memory', {});
});
afterAll(() => s.store.close());

describe('ranking memories', () => {
  it('gives the same candidates when the keyword matches were read ahead (while the query is embedded) as when all is read at once', () => {
    const db = s.store.db;
    const docids = queryRows(db, `SELECT docid FROM ${MEMORY_FTS} ORDER BY docid`).map((r) => Number(r.docid));
    expect(docids.length).toBeGreaterThan(80);
    for (const words of [['staging', 'deploy'], ['billing'], ['runbook', 'cache'], ['release', 'login', 'notes']]) {
      const keyword = keywordMatches(db, s.store.version, s.store.now, words, undefined, 800, new DocumentCounts()).hits;
      expect(keyword.length).toBeGreaterThan(0);
      // Semantic candidates: some the keyword search found too, some it did not.
      const semantic: NearestHit[] = docids.filter((d, i) => i % 7 === words.length).map((d, i) => ({ key: `k${d}`, docid: d, similarity: 0.9 - i * 0.01 }));
      const together = rankMemories(db, keyword, semantic, true);
      const ahead = rankMemories(db, keyword, semantic, true, readAround(db, keyword.map((h) => h.docid)));
      expect(ahead).toEqual(together);
      expect(together.some((c) => c.ref.startsWith('note:'))).toBe(true);
    }
  });

  it('get_context takes the same candidates and rows from what was read while the query is embedded as from what is read after', () => {
    const db = s.store.db;
    const docids = queryRows(db, `SELECT docid FROM ${MEMORY_FTS} ORDER BY docid`).map((r) => Number(r.docid));
    for (const query of ['staging deploy runbook', 'which service uses the billing database', 'release notes and the login test', 'May I change the cache layer?']) {
      const lexical = keywordMatches(db, s.store.version, s.store.now, contentWords(query), undefined, 800, new DocumentCounts());
      const semantic: NearestHit[] = docids.filter((d, i) => i % 5 === query.length % 5).map((d, i) => ({ key: `k${d}`, docid: d, similarity: 0.8 - i * 0.01 }));
      for (const maxTokens of [128, 800, 4000]) {
        const after = byQuery(db, lexical, semantic, query, undefined, maxTokens);
        expect(byQuery(db, lexical, semantic, query, undefined, maxTokens, readAhead(db, lexical.hits.map((h) => h.docid)))).toEqual(after);
        expect(after.notes.length).toBeGreaterThan(0);
        expect(after.facts.length).toBeGreaterThan(0);
      }
    }
  });

  it('takes the refs of fact and entry hits from their keys and reads only the chunks\', with the same candidates and rows as reading every ref', async () => {
    // Rules the permission question below must lead with when the ranking by meaning finds them.
    for (let i = 0; i < 6; i++) await call(s, 'remember', { statement: `rule ${i}`, subject: `change ${i}`, predicate: 'rule', object: 'ask before touching the cache layer' });
    const db = s.store.db;
    // Hits as the ranking by meaning returns them: each live memory's vector key with its docid.
    const live = queryRows(
      db,
      `SELECT 'fact:' || id AS key, fts_docid AS docid FROM facts WHERE retired_at IS NULL AND fts_docid IS NOT NULL
       UNION ALL SELECT id, fts_docid FROM notes WHERE retired_at IS NULL AND fts_docid IS NOT NULL
       UNION ALL SELECT 'chunk:' || file_id || ':' || seq, fts_docid FROM note_chunks WHERE fts_docid IS NOT NULL
       ORDER BY docid`,
    ).map((r) => ({ key: String(r.key), docid: Number(r.docid) }));
    for (const prefix of ['fact:', 'entry:', 'chunk:']) expect(live.some((h) => h.key.startsWith(prefix)), prefix).toBe(true);
    for (const query of ['staging deploy runbook', 'which service uses the billing database', 'May I change the cache layer?']) {
      const lexical = keywordMatches(db, s.store.version, s.store.now, contentWords(query), undefined, 800, new DocumentCounts());
      const picked = live.filter((_, i) => i % 3 === query.length % 3);
      const byKey: NearestHit[] = picked.map((h, i) => ({ ...h, similarity: 0.85 - i * 0.005 }));
      // The same hits under keys that say nothing, so every ref is read from the index.
      const opaque: NearestHit[] = byKey.map((h) => ({ ...h, key: `k${h.docid}` }));
      for (const neighbours of [true, false]) expect(rankMemories(db, lexical.hits, byKey, neighbours), query).toEqual(rankMemories(db, lexical.hits, opaque, neighbours));
      const refs = new Map(queryRows(db, `SELECT docid, ref FROM ${MEMORY_FTS}`).map((r) => [Number(r.docid), String(r.ref)]));
      for (const c of rankMemories(db, lexical.hits, byKey, true)) expect(c.ref).toBe(refs.get(c.docid));
      const withKeys = byQuery(db, lexical, byKey, query, undefined, 800);
      const withReads = byQuery(db, lexical, opaque, query, undefined, 800);
      expect(withKeys.facts.length).toBeGreaterThan(0);
      expect(Array.from({ length: withKeys.facts.length }, (_, i) => withKeys.facts.row(i))).toEqual(Array.from({ length: withReads.facts.length }, (_, i) => withReads.facts.row(i)));
      expect(withKeys.notes).toEqual(withReads.notes);
      expect(withKeys.rulesFirst).toBe(withReads.rulesFirst);
      if (query.startsWith('May')) expect(withKeys.rulesFirst).toBe(true);
    }
  });
});

describe('what get_context reads', () => {
  it('reads the rows of the facts it packs and a slice after them, counts the rest exactly, and looks the candidates up in indexes alone', async () => {
    const t = await openTemp();
    try {
      for (let i = 0; i < 180; i++) await t.memory.saveFact({ subject: `service ${i}`, predicate: i % 9 === 0 ? 'rule' : 'uses', object: `the billing database in region ${i % 7}` }, 'vitest');
      for (let i = 0; i < 90; i++) await t.memory.remember({ statement: `We moved the billing database of team ${i} to region ${i % 5} after a long talk about it.` }, 'vitest');
      const db = t.store.db;
      // Count the fact rows read whole (the statement with FACT_COLUMNS) and the entries read with their text, whoever prepares them.
      let rowsRead = 0;
      let entriesRead = 0;
      const prepare = db.prepare.bind(db);
      db.prepare = ((sql: string, params?: never) => {
        const stmt = prepare(sql, params);
        const entries = sql.includes('created_at, text FROM notes');
        if (sql.includes('superseded_by') || entries) {
          const step = stmt.step.bind(stmt);
          stmt.step = () => {
            const more = step();
            if (more && entries) entriesRead++;
            else if (more) rowsRead++;
            return more;
          };
        }
        return stmt;
      }) as typeof db.prepare;
      for (const query of ['which region is the billing database in', 'May I move the billing database?']) {
        const lexical = keywordMatches(db, t.store.version, t.store.now, contentWords(query), undefined, 800, new DocumentCounts());
        const ranked = byQuery(db, lexical, [], query, undefined, 800);
        const candidates = ranked.facts.length;
        expect(candidates).toBeGreaterThan(100);
        expect(ranked.notes.length).toBeGreaterThan(10);
        rowsRead = 0;
        entriesRead = 0;
        const reply = (await t.recall.getContext({ query })) as { facts: unknown[]; notes: unknown[]; left_out: { facts: number; notes: number } };
        expect(reply.facts.length).toBeGreaterThan(0);
        expect(reply.facts.length + reply.left_out.facts).toBe(candidates);
        expect(reply.notes.length + reply.left_out.notes).toBe(ranked.notes.length);
        expect(entriesRead, query).toBeLessThanOrEqual(reply.notes.length + 24);
        // The permission question reads the newest rules whole (ruleFacts) besides the slices.
        expect(rowsRead, query).toBeLessThan(reply.facts.length + 24 + (query.startsWith('May') ? 3 * 50 : 0) + 1);
        expect(rowsRead, query).toBeLessThan(candidates);
      }
      const plan = (sql: string) => queryRows(db, `EXPLAIN QUERY PLAN ${sql}`).map((r) => String(r.detail)).join(' | ');
      expect(plan("SELECT id, predicate_key FROM facts WHERE retired_at IS NULL AND id IN ('a', 'b')")).toContain('COVERING INDEX facts_ranked');
      expect(plan("SELECT id, scope, recorded_at, fts_docid, superseded_at FROM facts WHERE retired_at IS NULL AND id IN ('a', 'b')")).toContain('COVERING INDEX facts_ranked');
      expect(plan("SELECT id, scope, created_at, fts_docid FROM notes WHERE retired_at IS NULL AND id IN ('a', 'b')")).toContain('COVERING INDEX notes_ranked');
    } finally {
      t.store.close();
    }
  });
});
