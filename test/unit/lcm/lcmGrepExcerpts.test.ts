import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { regexSnippet } from '../../../src/core/lcm/grepText';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { bruteForce, bruteRanked } from './grepReference';
import { importedFixtures } from './lcmFixture';

/**
 * A full regex pass (relevance, hybrid) with limits far below the number of matching rows, over
 * messages and over messages and summaries together: every shown match must carry the excerpt
 * of its own first match, and the ids, order, count and truncation must be the slow reference's.
 */

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
});
afterAll(() => s.store.close());

type Match = { id: number | string; type: 'message' | 'summary'; snippet: string };
type Grep = { ok: boolean; reason?: string; count: number; truncated: boolean; matches: Match[] };

/** The text a match was found in: a message's (its blob's when large) or a summary's. */
function fullText(m: Match): string {
  if (m.type === 'summary') return String(queryRows(s.store.db, 'SELECT content FROM lcm_summaries WHERE id = ?', [m.id])[0]?.content);
  const row = queryRows(s.store.db, 'SELECT text, blob FROM events WHERE id = ?', [m.id])[0]!;
  return typeof row.blob === 'string' ? s.store.blobs.get(row.blob)!.toString('utf8') : String(row.text);
}

describe('lcm_grep regex excerpts in a full pass', () => {
  it('shows each match with its own excerpt, the reference ids and order, however few of the matches are shown', async () => {
    const cases: [string, RegExp][] = [
      ['the', /the/],
      ['/ERROR/i', /ERROR/i],
      ['[a-z]+ing\\b', /[a-z]+ing\b/],
      ['[a-z]', /[a-z]/],
      ['/(?:import|export)/i', /(?:import|export)/i],
    ];
    for (const [pattern, re] of cases) {
      const matching = bruteForce(s, re, 'messages').size;
      const ranked = bruteRanked(s, re, 'messages');
      for (const limit of [1, 7, 200]) {
        for (const sort of ['relevance', 'hybrid'] as const) {
          for (const scope of ['messages', 'both'] as const) {
            const r = (await invokeTool(findTool('lcm_grep')!, { pattern, scope, allConversations: true, limit, sort }, s, { client: 'test' })) as Grep;
            expect(r.ok, r.reason).toBe(true);
            const label = `${pattern} ${sort} ${scope} ${limit}`;
            expect(r.matches.length, label).toBeLessThanOrEqual(limit);
            if (scope === 'messages') {
              expect(r.count, label).toBe(Math.min(limit, matching));
              expect(r.truncated, label).toBe(matching > limit);
              if (sort === 'relevance') expect(r.matches.map((m) => m.id), label).toEqual(ranked.slice(0, limit));
            }
            for (const m of r.matches) {
              const text = fullText(m);
              const first = new RegExp(re.source, re.flags).exec(text)!;
              expect(m.snippet, `${label} ${m.id}`).toBe(regexSnippet(text, first.index, first[0].length));
            }
          }
        }
      }
    }
  });
});
