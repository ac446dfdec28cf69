import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../../src/core/history/historySchema';
import { EXCLUDED_SOURCES } from '../../../src/core/lcm/lcmConfig';
import { searchFts } from '../../../src/core/search/ftsSearch';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { importedFixtures } from './lcmFixture';

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
  // Recollect's own tool-call log holds the very words agents search for: enough of it that the
  // best matches of those words are mostly log rows, which lcm_grep must leave out.
  for (let i = 0; i < 60; i++) {
    await s.importer.recordInvocation({ client: 'test', tool: 'lcm_grep', input: { pattern: 'lmstudio ollama' }, result: { ok: true, matches: [{ snippet: `lmstudio ollama error ${i}: the model file` }] } });
  }
});
afterAll(() => s.store.close());

describe('lcm_grep full_text across conversations', () => {
  it('leaves out the tool-call log exactly as a filter on its sources would, for every sort and limit', async () => {
    const logged = Number(queryRows(s.store.db, `SELECT count(*) AS n FROM events e JOIN sessions x ON x.id = e.session_id WHERE x.source IN (${EXCLUDED_SOURCES.map(() => '?').join(',')})`, [...EXCLUDED_SOURCES])[0]?.n);
    expect(logged).toBeGreaterThanOrEqual(120);
    let compared = 0;
    for (const query of ['lmstudio', 'ollama', 'error', 'the model', 'file*']) {
      for (const sort of ['relevance', 'hybrid', 'recency'] as const) {
        for (const limit of [3, 20, 200]) {
          // The reference first: a tool call may be logged once it has answered, which changes the corpus.
          const filtered = searchFts(s.store.db, HISTORY_FTS, { query, limit, sort, now: s.store.now, excludeScopes: EXCLUDED_SOURCES });
          if (!filtered.ok) throw new Error(filtered.reason);
          const r = (await invokeTool(findTool('lcm_grep')!, { pattern: query, mode: 'full_text', scope: 'messages', allConversations: true, sort, limit }, s, { client: 'test' })) as { ok: boolean; matches: { id: number }[]; truncated: boolean };
          expect(r.ok).toBe(true);
          expect(r.matches.map((m) => m.id), `${query} ${sort} ${limit}`).toEqual(filtered.hits.map((h) => h.docid));
          expect(r.truncated, `${query} ${sort} ${limit}`).toBe(filtered.total > limit);
          compared += filtered.hits.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(300);
  });
});
