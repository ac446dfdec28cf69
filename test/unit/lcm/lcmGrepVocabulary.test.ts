import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DOCLIST_SHARE, MAX_TERMS, termTest } from '../../../src/core/lcm/ftsVocabulary';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { writeClaudeSession, type Step } from '../helpers/claudeTranscript';
import { tempHome } from '../helpers/tempStore';
import { importedFixtures } from './lcmFixture';

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
});
afterAll(() => s.store.close());

type Grep = { ok: boolean; reason?: string; matches: { id: number }[]; scan: { messages: { prefilter: string; candidates: number } } };
const grep = async (input: object) => (await invokeTool(findTool('lcm_grep')!, input, s, { client: 'test' })) as Grep;

/** The session's events the regex matches, each full text read and tested. */
function bruteForce(sessionId: string, re: RegExp): number[] {
  return queryRows(s.store.db, 'SELECT id, text, blob FROM events WHERE session_id = ?', [sessionId])
    .filter((r) => new RegExp(re.source, re.flags).test(typeof r.blob === 'string' ? s.store.blobs.get(r.blob)!.toString('utf8') : String(r.text)))
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
}

describe('lcm_grep regex through the index vocabulary', () => {
  it('proves a term test only where the analyzed terms must hold it', () => {
    // A word with a digit is never stemmed, so its term holds the literal wherever it lies.
    expect(termTest('getOllama2', false)).toEqual({ kind: 'contains', part: 'getollama2' });
    expect(termTest('utf8":', false)).toEqual({ kind: 'suffix', part: 'utf8' });
    expect(termTest(':1', false)).toEqual({ kind: 'prefix', part: '1' });
    // A word of letters is stemmed: its term begins it but may end inside the literal.
    expect(termTest('getOllama', false)).toBeUndefined();
    expect(termTest('Count":', false)).toBeUndefined();
    expect(termTest(':Depend', false)).toEqual({ kind: 'prefix', part: 'depend', orShorter: true });
    // A whole word is the phrase prefilter's; non-ASCII and /iu fold beyond what the check can prove.
    expect(termTest(' ollama ', false)).toBeUndefined();
    expect(termTest('запис', false)).toBeUndefined();
    expect(termTest('ollama', true)).toBeUndefined();
    expect(termTest('--', false)).toBeUndefined();
  });

  it('finds what was written a moment ago, before the store committed its batch, as index segments come and merge', async () => {
    // One transcript that grows by a turn each round, re-imported: every import adds an index
    // segment and every 16 at a level are merged into one a level up, so 40 rounds replace
    // segments the vocabulary had already read.
    const segments = () => queryRows(s.store.db, "SELECT level || ':' || idx || ':' || hex(root) AS k FROM history_fts_segdir").map((r) => String(r.k));
    const dir = tempHome('vocabulary');
    const steps: Step[] = [];
    let first: string[] = [];
    for (let round = 0; round < 40; round++) {
      const token = `zqCanary${round}Wordzq`;
      steps.push({ user: `calling get${token}Model now` });
      await s.importer.importPaths([writeClaudeSession(dir, 'c0ffee00-0000-4000-8000-00000000beef', steps)]);
      const session = queryRows(s.store.db, "SELECT rowid AS n, id FROM sessions WHERE external_id = 'c0ffee00-0000-4000-8000-00000000beef'")[0]!;
      const re = new RegExp(`${token.slice(2, -2).toUpperCase()}`, 'i');
      const expected = bruteForce(String(session.id), re);
      const r = await grep({ pattern: `/${re.source}/i`, scope: 'messages', conversationId: Number(session.n), limit: 200 });
      expect(r.ok, r.reason).toBe(true);
      expect(r.scan.messages.prefilter).toBe('vocabulary');
      expect(expected.length).toBeGreaterThan(0);
      expect(r.matches.map((m) => m.id).sort((a, b) => a - b)).toEqual(expected);
      if (round === 0) first = segments();
    }
    const last = new Set(segments());
    expect(first.filter((k) => !last.has(k)).length, 'segments the first search read were merged away').toBeGreaterThan(0);
  });

  it('falls back to a scan when the terms are too many, or so common that the index would return most rows anyway', async () => {
    s.store.db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocabulary_probe USING fts4aux(main, history_fts)');
    const terms = (part: string) => Number(queryRows(s.store.db, "SELECT count(*) AS n FROM temp.vocabulary_probe WHERE col = '*' AND instr(term, ?) > 0", [part])[0]?.n);
    const rows = (part: string) => Number(queryRows(s.store.db, "SELECT sum(documents) AS n FROM temp.vocabulary_probe WHERE col = '*' AND instr(term, ?) > 0", [part])[0]?.n);
    const all = Number(queryRows(s.store.db, "SELECT sum(documents) AS n FROM temp.vocabulary_probe WHERE col = '*'")[0]?.n);
    const prefilter = async (pattern: string) => {
      const r = await grep({ pattern, scope: 'messages', allConversations: true, sort: 'relevance', limit: 200 });
      expect(r.ok, r.reason).toBe(true);
      return r.scan.messages.prefilter;
    };
    // (Past MAX_TERMS: the fixtures' stemmed vocabulary holds no literal with that many terms that a test can prove.)
    expect(terms('1')).toBeLessThan(MAX_TERMS);
    // Few terms, but in many rows: the share of the index their doclists take decides.
    expect(terms('0')).toBeLessThan(MAX_TERMS);
    expect(rows('0') / all).toBeGreaterThan(MAX_DOCLIST_SHARE);
    expect(await prefilter('0')).toBe('substring');
    expect(rows('d78e12ef') / all).toBeLessThan(MAX_DOCLIST_SHARE);
    expect(await prefilter('d78e12ef')).toBe('vocabulary');
  });
});
