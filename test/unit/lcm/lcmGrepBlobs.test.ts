import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { regexSnippet } from '../../../src/core/lcm/grepText';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { transcriptFixtures } from '../helpers/fixtures';
import { tempHome } from '../helpers/tempStore';
import { bruteForce, bruteRanked } from './grepReference';
import { importedFixtures } from './lcmFixture';

/**
 * Large outputs live in content-addressed blobs, so one that recurs is one blob; lcm_grep reads
 * and tests it once per search. The fixtures hold no repeat, so the two transcripts with large
 * outputs are imported a second time as new sessions (every UUID replaced, as a copied session
 * would have), and the answers must still equal a scan of every text.
 */

let s: Services;
let copies: string;
beforeAll(async () => {
  s = await importedFixtures();
  copies = tempHome('lcm-blobs');
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
  const fresh = (u: string) => `${u.slice(0, 24)}0123456789ab`; // the same new id for the same old one
  for (const rel of ['copilot-export/dealenx_chat_succes_mcp.json', 'codex/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl']) {
    const text = fs.readFileSync(path.join(transcriptFixtures(), rel), 'utf8').replace(uuid, fresh);
    const file = path.join(copies, path.dirname(rel), `copy-${path.basename(rel).replace(uuid, fresh)}`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  await s.importer.importPaths([copies]);
});
afterAll(() => {
  s.store.close();
  fs.rmSync(copies, { recursive: true, force: true });
});

describe('lcm_grep over recurring large outputs', () => {
  it('tests a recurring blob once and still answers every event that holds it, in every order', async () => {
    const blobs = queryRows(s.store.db, 'SELECT count(*) AS n, count(DISTINCT blob) AS d FROM events WHERE blob IS NOT NULL')[0]!;
    expect(Number(blobs.n)).toBeGreaterThan(Number(blobs.d));
    const cases: [string, RegExp][] = [
      ['ntriesCoun', /ntriesCoun/],
      ['/"UNPROCESSEDENTRIESCOUNT": [0-9]/i', /"UNPROCESSEDENTRIESCOUNT": [0-9]/i],
      ['createdMessages\\[0\\]\\.id', /createdMessages\[0\]\.id/],
      ['"[a-z]+Count": [0-9]+', /"[a-z]+Count": [0-9]+/],
      // No literal to check first: every large event reaches the regex, each distinct blob once.
      ['[0-9]{4}-[0-9]{2}-[0-9]{2}', /[0-9]{4}-[0-9]{2}-[0-9]{2}/],
      ['[A-Z][a-z]+[A-Z][a-z]+', /[A-Z][a-z]+[A-Z][a-z]+/],
    ];
    for (const [pattern, re] of cases) {
      const expected = bruteForce(s, re, 'messages');
      expect(expected.size, pattern).toBeGreaterThan(1);
      for (const sort of ['recency', 'relevance'] as const) {
        const r = (await invokeTool(findTool('lcm_grep')!, { pattern, scope: 'messages', allConversations: true, limit: 200, sort }, s, { client: 'test' })) as { ok: boolean; matches: { id: number; snippet: string }[] };
        expect(r.ok).toBe(true);
        if (expected.size <= 200) expect(new Set(r.matches.map((m) => m.id)), `${pattern} ${sort}`).toEqual(expected);
        if (sort === 'relevance') expect(r.matches.map((m) => m.id), pattern).toEqual(bruteRanked(s, re, 'messages').slice(0, 200));
        // Each event shows its own first match, excerpted from its own full text.
        for (const m of r.matches) {
          const row = queryRows(s.store.db, 'SELECT text, blob FROM events WHERE id = ?', [m.id])[0]!;
          const text = typeof row.blob === 'string' ? s.store.blobs.get(row.blob)!.toString('utf8') : String(row.text);
          const first = new RegExp(re.source, re.flags).exec(text)!;
          expect(m.snippet, `${pattern} ${m.id}`).toBe(regexSnippet(text, first.index, first[0].length));
        }
      }
    }
  });
});
