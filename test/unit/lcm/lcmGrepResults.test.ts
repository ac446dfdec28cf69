import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../../src/core/history/historySchema';
import { LCM_SUMMARY_FTS } from '../../../src/core/lcm/lcmSchema';
import { searchFts, snippets } from '../../../src/core/search/ftsSearch';
import { topK, type Ranked } from '../../../src/core/search/rank';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { iso } from '../../../src/core/text/time';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { importedFixtures } from './lcmFixture';

/**
 * lcm_grep full_text answers, field by field, against a reference built the slow, obvious way:
 * the one scorer, SQLite's own snippet() per hit, and one
 * plain lookup per field. Whatever lcm_grep does to save time must not change a single field.
 */

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
});
afterAll(() => s.store.close());

type Match = Record<string, unknown>;
const one = (sql: string, params: (string | number)[]) => queryRows(s.store.db, sql, params)[0];

function referenceMessage(match: string, h: Ranked): Match {
  const e = one('SELECT session_id, kind, tool_name FROM events WHERE id = ?', [h.docid]);
  const conv = one('SELECT rowid AS n FROM sessions WHERE id = ?', [String(e?.session_id)]);
  const leaf = one('SELECT summary_id FROM lcm_summary_sources WHERE event_id = ?', [h.docid]);
  const snip = { s: snippets(s.store.db, HISTORY_FTS, match, [h.docid], 24).get(h.docid) };
  return {
    id: h.docid, type: 'message', snippet: String(snip?.s), conversationId: Number(conv?.n), createdAt: iso(h.createdAt),
    role: String(e?.kind), toolName: e?.tool_name === null ? null : String(e?.tool_name), coveredBy: leaf ? String(leaf.summary_id) : null, matched: 'all',
  };
}

function referenceSummary(match: string, h: Ranked): Match {
  const x = one('SELECT id, session_id, depth, kind FROM lcm_summaries WHERE n = ?', [h.docid]);
  const conv = one('SELECT rowid AS n FROM sessions WHERE id = ?', [String(x?.session_id)]);
  const snip = { s: snippets(s.store.db, LCM_SUMMARY_FTS, match, [h.docid], 24).get(h.docid) };
  const id = String(x?.id);
  return { id, type: 'summary', snippet: String(snip?.s), conversationId: Number(conv?.n), createdAt: iso(h.createdAt), depth: Number(x?.depth), kind: String(x?.kind), summaryId: id, matched: 'all' };
}

/** Narrowing beyond the query: one conversation (its session id), a time window. */
interface Narrow {
  sessionId?: string;
  since?: number;
  before?: number;
}

function reference(query: string, scope: 'messages' | 'summaries' | 'both', sort: 'relevance' | 'recency' | 'hybrid', limit: number, now: number, narrow: Narrow = {}): { matches: Match[]; truncated: boolean } {
  const req = { query, limit, sort, now, ...(narrow.since === undefined ? {} : { since: narrow.since }), ...(narrow.before === undefined ? {} : { before: narrow.before }) };
  const found: { ranked: Ranked; make: () => Match }[] = [];
  let total = 0;
  if (scope !== 'summaries') {
    const r = searchFts(s.store.db, HISTORY_FTS, narrow.sessionId ? { ...req, filters: { session_id: narrow.sessionId } } : req);
    if (!r.ok) throw new Error(r.reason);
    total += r.total;
    for (const h of r.hits) found.push({ ranked: h, make: () => referenceMessage(r.match, h) });
  }
  if (scope !== 'messages') {
    const r = searchFts(s.store.db, LCM_SUMMARY_FTS, narrow.sessionId ? { ...req, scope: narrow.sessionId } : req);
    if (!r.ok) throw new Error(r.reason);
    total += r.total;
    for (const h of r.hits) found.push({ ranked: h, make: () => referenceSummary(r.match, h) });
  }
  const best = topK(found.map((f) => f.ranked), limit);
  return { matches: best.map((b) => (found.find((f) => f.ranked === b) as (typeof found)[number]).make()), truncated: total > best.length };
}

describe('lcm_grep full_text results', () => {
  it('equal the slow reference field by field (ids, order, snippets, conversation, role, tool, leaf), for every scope and sort', async () => {
    let compared = 0;
    const roles = new Set<unknown>();
    for (const query of ['ollama', 'error', 'the model', 'config*', '"npm run dev"', 'lmstudio', 'file', 'typescript']) {
      for (const scope of ['messages', 'summaries', 'both'] as const) {
        for (const sort of ['relevance', 'recency', 'hybrid'] as const) {
          for (const limit of [5, 50]) {
            // hybrid decays by age, 0.1% an hour: the milliseconds between the two calls cannot reorder it.
            const want = reference(query, scope, sort, limit, s.store.now);
            const got = (await invokeTool(findTool('lcm_grep')!, { pattern: query, mode: 'full_text', scope, sort, limit, allConversations: true }, s, { client: 'test' })) as { ok: boolean; matches: Match[]; truncated: boolean };
            expect(got.ok).toBe(true);
            // Every-word matches as the reference finds them; partial ones only fill up after them (partialMatches.ts).
            const all = got.matches.filter((m) => m.matched === 'all');
            expect(all, `${query} ${scope} ${sort} ${limit}`).toEqual(want.matches);
            expect(got.matches.slice(all.length).every((m) => m.matched === 'partial'), `${query} ${scope} ${sort} ${limit}`).toBe(true);
            if (all.length === got.matches.length) expect(got.truncated, `${query} ${scope} ${sort} ${limit}`).toBe(want.truncated);
            compared += want.matches.length;
            for (const m of got.matches) roles.add(m.role);
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(600);
    // The comparison covers tool calls and results (with a tool name) as well as plain messages.
    expect(roles.has('tool_result') && roles.has('assistant')).toBe(true);
  });

  it('equal the slow reference within one conversation and within a time window (the filtered scorer paths)', async () => {
    // The two conversations with the most messages, so each search has something to rank.
    const convs = queryRows(
      s.store.db,
      `SELECT s.rowid AS n, s.id FROM sessions s
       ORDER BY (SELECT count(*) FROM events e WHERE e.session_id = s.id) DESC, s.rowid LIMIT 2`,
    );
    const times = queryRows(s.store.db, 'SELECT created_at AS t FROM events WHERE created_at IS NOT NULL ORDER BY created_at').map((r) => Number(r.t));
    const since = times[Math.floor(times.length / 4)] as number;
    const before = times[Math.floor((times.length * 3) / 4)] as number;
    expect(convs.length).toBe(2);
    let compared = 0;
    for (const query of ['ollama', 'error', 'the model', 'config*', 'file']) {
      for (const scope of ['messages', 'summaries', 'both'] as const) {
        for (const sort of ['relevance', 'recency', 'hybrid'] as const) {
          const cases: { args: Record<string, unknown>; narrow: Narrow }[] = [
            ...convs.map((c) => ({ args: { conversationId: Number(c.n) }, narrow: { sessionId: String(c.id) } })),
            { args: { allConversations: true, since: new Date(since).toISOString(), before: new Date(before).toISOString() }, narrow: { since, before } },
          ];
          for (const { args, narrow } of cases) {
            const want = reference(query, scope, sort, 20, s.store.now, narrow);
            const got = (await invokeTool(findTool('lcm_grep')!, { pattern: query, mode: 'full_text', scope, sort, limit: 20, ...args }, s, { client: 'test' })) as { ok: boolean; matches: Match[]; truncated: boolean };
            const label = `${query} ${scope} ${sort} ${JSON.stringify(args)}`;
            expect(got.ok, label).toBe(true);
            // Every-word matches as the reference finds them; partial ones only fill up after them (partialMatches.ts).
            const all = got.matches.filter((m) => m.matched === 'all');
            expect(all, label).toEqual(want.matches);
            expect(got.matches.slice(all.length).every((m) => m.matched === 'partial'), label).toBe(true);
            if (all.length === got.matches.length) expect(got.truncated, label).toBe(want.truncated);
            compared += want.matches.length;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(200);
  });
});
