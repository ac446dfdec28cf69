import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../../src/core/history/historySchema';
import { EXCLUDED_SOURCES } from '../../../src/core/lcm/lcmConfig';
import { LCM_SUMMARY_FTS } from '../../../src/core/lcm/lcmSchema';
import { searchFts } from '../../../src/core/search/ftsSearch';
import { topK, type Ranked } from '../../../src/core/search/rank';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { iso } from '../../../src/core/text/time';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { importedFixtures } from './lcmFixture';

/**
 * lcm_grep full_text answers, field by field, against a reference built the slow, obvious way:
 * the one scorer with the tool-call log filtered out, SQLite's own snippet() per hit, and one
 * plain lookup per field. Whatever lcm_grep does to save time must not change a single field.
 */

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
  for (let i = 0; i < 30; i++) {
    await s.importer.recordInvocation({ client: 'test', tool: 'lcm_grep', input: { pattern: 'ollama error' }, result: { ok: true, matches: [{ snippet: `ollama error ${i}: the config file` }] } });
  }
});
afterAll(() => s.store.close());

type Match = Record<string, unknown>;
const one = (sql: string, params: (string | number)[]) => queryRows(s.store.db, sql, params)[0];

function referenceMessage(match: string, h: Ranked): Match {
  const e = one('SELECT session_id, kind, tool_name FROM events WHERE id = ?', [h.docid]);
  const conv = one('SELECT rowid AS n FROM sessions WHERE id = ?', [String(e?.session_id)]);
  const leaf = one('SELECT summary_id FROM lcm_summary_sources WHERE event_id = ?', [h.docid]);
  const snip = one(`SELECT snippet(${HISTORY_FTS}, '[', ']', '…', 0, 24) AS s FROM ${HISTORY_FTS} WHERE ${HISTORY_FTS} MATCH ? AND docid = ?`, [match, h.docid]);
  return {
    id: h.docid, type: 'message', snippet: String(snip?.s), conversationId: Number(conv?.n), createdAt: iso(h.createdAt),
    role: String(e?.kind), toolName: e?.tool_name === null ? null : String(e?.tool_name), coveredBy: leaf ? String(leaf.summary_id) : null,
  };
}

function referenceSummary(match: string, h: Ranked): Match {
  const x = one('SELECT id, session_id, depth, kind FROM lcm_summaries WHERE n = ?', [h.docid]);
  const conv = one('SELECT rowid AS n FROM sessions WHERE id = ?', [String(x?.session_id)]);
  const snip = one(`SELECT snippet(${LCM_SUMMARY_FTS}, '[', ']', '…', 0, 24) AS s FROM ${LCM_SUMMARY_FTS} WHERE ${LCM_SUMMARY_FTS} MATCH ? AND docid = ?`, [match, h.docid]);
  const id = String(x?.id);
  return { id, type: 'summary', snippet: String(snip?.s), conversationId: Number(conv?.n), createdAt: iso(h.createdAt), depth: Number(x?.depth), kind: String(x?.kind), summaryId: id };
}

function reference(query: string, scope: 'messages' | 'summaries' | 'both', sort: 'relevance' | 'recency' | 'hybrid', limit: number, now: number): { matches: Match[]; truncated: boolean } {
  const req = { query, limit, sort, now };
  const found: { ranked: Ranked; make: () => Match }[] = [];
  let total = 0;
  if (scope !== 'summaries') {
    const r = searchFts(s.store.db, HISTORY_FTS, { ...req, excludeScopes: EXCLUDED_SOURCES });
    if (!r.ok) throw new Error(r.reason);
    total += r.total;
    for (const h of r.hits) found.push({ ranked: h, make: () => referenceMessage(r.match, h) });
  }
  if (scope !== 'messages') {
    const r = searchFts(s.store.db, LCM_SUMMARY_FTS, req);
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
            expect(got.matches, `${query} ${scope} ${sort} ${limit}`).toEqual(want.matches);
            expect(got.truncated, `${query} ${scope} ${sort} ${limit}`).toBe(want.truncated);
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
});
