import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { countTokens } from '../../../src/core/text/tokens';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { bruteForce, bruteRanked } from './grepReference';
import { deepestSession, importedFixtures } from './lcmFixture';

type Result = Record<string, unknown> & { ok: boolean; reason?: string };
type Match = { id: number | string; type: string; snippet: string; conversationId: number; createdAt: string; depth?: number; kind?: string; summaryId?: string; role?: string };

let s: Services;
beforeAll(async () => {
  s = await importedFixtures();
});
afterAll(() => s.store.close());

const call = async (name: string, input: object, client = 'claude-code') => (await invokeTool(findTool(name)!, input, s, { client })) as Result;
const grep = async (input: object, client?: string): Promise<Result & { matches: Match[] }> => {
  const r = await call('lcm_grep', input, client);
  return { ...r, matches: (r.matches ?? []) as Match[] };
};

describe('lcm_grep', () => {
  it('regex mode finds exactly what a scan of every full text finds, whichever prefilter narrowed it', async () => {
    const cases: [string, RegExp, string][] = [
      ['lmstudio', /lmstudio/, 'grams'],
      ['npm (run|test)', /npm (run|test)/, 'grams'],
      ['npm run dev', /npm run dev/, 'fts'],
      ['запис[а-я]+', /запис[а-я]+/, 'grams'],
      ['chatbot-ui', /chatbot-ui/, 'fts'],
      ['/OLLAMA/i', /OLLAMA/i, 'grams'],
      ['update_entry_fields', /update_entry_fields/, 'fts'],
      ['\\bfunction \\w+\\(', /\bfunction \w+\(/, 'grams'],
      ['"documentId":"1[0-9]"', /"documentId":"1[0-9]"/, 'fts'],
      ['\\d{4}-\\d{2}-\\d{2}', /\d{4}-\d{2}-\d{2}/, 'substring'],
      ['[Ee]rr(or)?:', /[Ee]rr(or)?:/, 'substring'],
      ['\\s{3}', /\s{3}/, 'none'],
      // A literal of letters in the middle of words: no whole word to look up, and a word of
      // letters is indexed by its stem, which may end inside the literal: the gram filter's blocks, then a substring check.
      // With a digit the word is kept whole, and the index terms that hold the literal are looked up (":123" below).
      ['ocalhos', /ocalhos/, 'grams'],
      ['rocessedEntr', /rocessedEntr/, 'grams'],
      ['/OCALHO/i', /OCALHO/i, 'grams'],
      ['/roce/i', /roce/i, 'grams'],
      // RE2's /i matches ſ for s and K for k, which the index's ASCII folding does not see; the gram filter folds them together.
      ['/processedentries/i', /processedentries/i, 'grams'],
      ['tatus', /tatus/, 'grams'],
      ['ocalhost:', /ocalhost:/, 'grams'],
      ['rror: ', /rror: /, 'grams'],
      ['\\.json', /\.json/, 'fts'],
      ['json"', /json"/, 'grams'],
      [':123', /:123/, 'vocabulary'],
      // A fragment in too many rows (numbers starting with 1): the index would return most of them, so a scan.
      [':1[0-9]', /:1[0-9]/, 'substring'],
      // u changes nothing (RE2 reads Unicode); only s and k fold beyond ASCII, and "ollama" holds neither:
      // the gram filter, as for any literal of letters inside words.
      ['/ollama/iu', /ollama/iu, 'grams'],
      // A literal across punctuation: its inner words as one FTS phrase.
      ['localhost:1234/v1', /localhost:1234\/v1/, 'fts'],
      ['README\\.md', /README\.md/, 'fts'],
      // Case-insensitive with a bounded word: the index folds case too.
      ['/ Ollama /i', / Ollama /i, 'fts'],
      // Alternation with no literal common to both sides: every event is read.
      ['ollama|lmstudio', /ollama|lmstudio/, 'none'],
      // Literals that large events hold past the part the index and the inline text keep: their
      // blobs are candidates whatever the prefilter says, searched as raw bytes first.
      ['createdMessages\\[0\\]\\.id', /createdMessages\[0\]\.id/, 'fts'],
      ['ntriesCoun', /ntriesCoun/, 'grams'],
      ['/"UNPROCESSEDENTRIESCOUNT": [0-9]/i', /"UNPROCESSEDENTRIESCOUNT": [0-9]/i, 'fts'],
    ];
    const sizes: string[] = [];
    for (const [pattern, re, prefilter] of cases) {
      for (const scope of ['messages', 'summaries'] as const) {
        const r = await grep({ pattern, scope, allConversations: true, limit: 200 });
        expect(r.ok, `${pattern}: ${r.reason}`).toBe(true);
        const expected = bruteForce(s, re, scope);
        sizes.push(`${pattern} ${scope}: ${expected.size}`);
        if (expected.size <= 200) expect(new Set(r.matches.map((m) => m.id)), `${pattern} in ${scope}`).toEqual(expected);
        else expect(r.truncated).toBe(true);
        if (scope === 'messages') expect((r.scan as Record<string, { prefilter: string }>).messages!.prefilter, pattern).toBe(prefilter);
        // Relevance reads every candidate in one pass: the same matches, ranked by how often they match.
        const ranked = await grep({ pattern, scope, allConversations: true, limit: 200, sort: 'relevance' });
        expect(ranked.matches.map((m) => m.id), `${pattern} in ${scope} by relevance`).toEqual(bruteRanked(s, re, scope).slice(0, 200));
      }
    }
    // The comparison means something only where there is something to find.
    const empty = sizes.filter((x) => x.endsWith(': 0'));
    expect(empty.filter((x) => x.includes(' messages:')), sizes.join('\n')).toEqual([]);
    // Summaries are extractive and short, so many patterns miss them; enough must still hit.
    expect(sizes.filter((x) => x.includes(' summaries:') && !x.endsWith(': 0')).length, sizes.join('\n')).toBeGreaterThanOrEqual(6);
  });

  it('returns the spec\'s fields, newest first by default, with the match in brackets', async () => {
    const r = await grep({ pattern: 'ollama', allConversations: true, limit: 200 });
    expect(r.ok).toBe(true);
    const types = new Set(r.matches.map((m) => m.type));
    expect(types).toEqual(new Set(['message', 'summary']));
    for (const m of r.matches) {
      expect(m).toMatchObject({ snippet: expect.stringMatching(/\[[^\]]*ollama[^\]]*\]/i), conversationId: expect.any(Number), createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
      if (m.type === 'summary') expect(m).toMatchObject({ id: expect.stringMatching(/^sum_/), depth: expect.any(Number), kind: expect.stringMatching(/^(leaf|condensed)$/), summaryId: m.id });
      else expect(m).toMatchObject({ id: expect.any(Number), role: expect.any(String) });
    }
    const times = r.matches.map((m) => Date.parse(m.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const limited = await grep({ pattern: 'ollama', allConversations: true, limit: 2 });
    expect(limited.matches).toHaveLength(2);
    expect(limited.truncated).toBe(true);
  });

  it('defaults to the current conversation, honours conversationId, since and before', async () => {
    const current = await grep({ pattern: '.', scope: 'messages', limit: 200 });
    const ids = new Set(current.matches.map((m) => m.conversationId));
    expect(ids.size).toBe(1);
    expect(current.conversation).toMatchObject({ how: expect.stringContaining('current conversation') });
    const deep = deepestSession(s);
    const one = await grep({ pattern: 'ollama', conversationId: deep.conversationId, limit: 200 });
    expect(one.matches.length).toBeGreaterThan(0);
    expect(new Set(one.matches.map((m) => m.conversationId))).toEqual(new Set([deep.conversationId]));
    const all = await grep({ pattern: 'a', scope: 'messages', allConversations: true, limit: 200 });
    const mid = [...all.matches.map((m) => m.createdAt)].sort()[Math.floor(all.matches.length / 2)]!;
    const later = await grep({ pattern: 'a', scope: 'messages', allConversations: true, limit: 200, since: mid });
    expect(later.matches.length).toBeGreaterThan(0);
    for (const m of later.matches) expect(Date.parse(m.createdAt)).toBeGreaterThanOrEqual(Date.parse(mid));
    const earlier = await grep({ pattern: 'a', scope: 'messages', allConversations: true, limit: 200, before: mid });
    for (const m of earlier.matches) expect(Date.parse(m.createdAt)).toBeLessThan(Date.parse(mid));
    expect(await call('lcm_grep', { pattern: 'a', conversationId: 99999 })).toMatchObject({ ok: false, reason: expect.stringContaining('no conversation 99999') });
    expect(await call('lcm_grep', { pattern: 'a', since: 'last tuesday' })).toMatchObject({ ok: false, reason: expect.stringContaining('ISO') });
  });

  it('full_text goes through the one scorer, and refuses regex syntax saying what it found', async () => {
    const r = await grep({ pattern: 'lmstudio', mode: 'full_text', allConversations: true, sort: 'relevance' });
    expect(r.ok).toBe(true);
    expect(r.matches.length).toBeGreaterThan(0);
    for (const m of r.matches) expect(m.snippet.toLowerCase()).toContain('[lmstudio');
    const refused = await call('lcm_grep', { pattern: 'config\\.threshold.*0\\.[0-9]+', mode: 'full_text' });
    expect(refused).toMatchObject({ ok: false, reason: expect.stringMatching(/full_text.*not patterns.*backslash escape.*mode "regex"/s) });
    expect(await call('lcm_grep', { pattern: 'foo(' })).toMatchObject({ ok: false, reason: expect.stringContaining('not a valid regular expression (RE2 syntax)') });
    expect(await call('lcm_grep', { pattern: 'x', limit: 201 })).toMatchObject({ ok: false, budget: { limit: 200, used: 201 } });
  });
});

describe('lcm_describe', () => {
  it('describes a condensed summary and a leaf with every field the spec lists', async () => {
    const deep = deepestSession(s);
    const top = queryRows(s.store.db, 'SELECT id FROM lcm_summaries WHERE session_id = ? ORDER BY depth DESC LIMIT 1', [deep.sessionId])[0]!.id as string;
    const d = await call('lcm_describe', { id: top, conversationId: deep.conversationId });
    expect(d).toMatchObject({
      ok: true, type: 'summary', id: top, conversationId: deep.conversationId, content: expect.stringContaining('Expand for details about:'), depth: expect.any(Number), kind: 'condensed',
      tokenCount: expect.any(Number), createdAt: expect.any(String), earliestAt: expect.any(String), latestAt: expect.any(String), descendantCount: expect.any(Number),
      parentIds: [], childIds: expect.arrayContaining([expect.stringMatching(/^sum_/)]), sourceMessageIds: [], fileIds: expect.any(Array), producer: 'extractive',
    });
    const leaf = queryRows(s.store.db, "SELECT id FROM lcm_summaries WHERE session_id = ? AND kind = 'leaf' AND id IN (SELECT child_id FROM lcm_summary_parents) LIMIT 1", [deep.sessionId])[0]!.id as string;
    const l = await call('lcm_describe', { id: leaf, conversationId: deep.conversationId });
    expect(l).toMatchObject({ kind: 'leaf', depth: 0, childIds: [], parentIds: [expect.stringMatching(/^sum_/)], sourceMessageIds: expect.arrayContaining([expect.any(Number)]) });
    expect((l.messageCount as number)).toBe((l.sourceMessageIds as number[]).length);
  });

  it('describes a stored file with its full content, and scopes lookups to a conversation', async () => {
    const f = queryRows(s.store.db, 'SELECT f.id, f.blob, x.rowid AS n FROM lcm_files f JOIN sessions x ON x.id = f.session_id LIMIT 1')[0]!;
    const d = await call('lcm_describe', { id: f.id as string, allConversations: true });
    expect(d).toMatchObject({ ok: true, type: 'file', fileName: expect.any(String), mimeType: expect.any(String), byteSize: expect.any(Number), explorationSummary: expect.any(String), storagePath: expect.any(String) });
    expect(d.content).toBe(s.store.blobs.get(f.blob as string)!.toString('utf8'));
    expect(Buffer.byteLength(d.content as string, 'utf8')).toBe(d.byteSize);
    const other = queryRows(s.store.db, "SELECT x.id, s.rowid AS n FROM lcm_summaries x JOIN sessions s ON s.id = x.session_id WHERE s.source != 'claude-code' LIMIT 1")[0]!;
    expect(await call('lcm_describe', { id: other.id as string })).toMatchObject({ ok: false, reason: expect.stringContaining(`belongs to conversation ${Number(other.n)}`) });
    expect(await call('lcm_describe', { id: other.id as string, allConversations: true })).toMatchObject({ ok: true });
    expect(await call('lcm_describe', { id: 'sum_0000000000000000', allConversations: true })).toMatchObject({ ok: false, reason: expect.stringContaining('no summary') });
    expect(await call('lcm_describe', { id: 'msg_12' })).toMatchObject({ ok: false, reason: expect.stringContaining('not an LCM id') });
  });
});

describe('lcm_expand and lcm_expand_query without a model', () => {
  it('lcm_expand refuses every caller without the sub-agent\'s grant, and a forged or expired one', async () => {
    const leaf = queryRows(s.store.db, "SELECT id FROM lcm_summaries WHERE kind = 'leaf' LIMIT 1")[0]!.id as string;
    for (const client of ['copilot-chat', 'claude-code', 'cli']) {
      expect(await call('lcm_expand', { summaryIds: [leaf] }, client)).toMatchObject({ ok: false, reason: expect.stringContaining('Use lcm_expand_query') });
    }
    const tool = findTool('lcm_expand')!;
    expect(await invokeTool(tool, { summaryIds: [leaf] }, s, { client: 'x', expandGrant: 'forged' })).toMatchObject({ ok: false, reason: expect.stringContaining('unknown or was revoked') });
    const expired = s.lcm.grants.issue(['whatever'], -1, 100);
    expect(await invokeTool(tool, { summaryIds: [leaf] }, s, { client: 'x', expandGrant: expired.token })).toMatchObject({ ok: false, reason: expect.stringContaining('expired') });
    const wrongScope = s.lcm.grants.issue(['ses_elsewhere'], 60_000, 10_000);
    expect(await invokeTool(tool, { summaryIds: [leaf] }, s, { client: 'x', expandGrant: wrongScope.token })).toMatchObject({ ok: false, reason: expect.stringContaining('outside the conversations') });
  });

  it('answers from the best source excerpts with cited ids and says plainly that no model synthesised it', async () => {
    const deep = deepestSession(s);
    const r = await call('lcm_expand_query', { prompt: 'How was chatbot-ui switched from ollama to lmstudio?', query: 'lmstudio', conversationId: deep.conversationId, maxTokens: 600 });
    expect(r).toMatchObject({
      ok: true, answer: expect.stringContaining('No language model synthesised this answer'), citedIds: expect.arrayContaining([expect.stringMatching(/^sum_/)]),
      sourceConversationIds: [deep.conversationId], expandedSummaryCount: expect.any(Number), totalSourceTokens: expect.any(Number), truncated: expect.any(Boolean), synthesizedBy: null,
    });
    expect(countTokens(r.answer as string)).toBeLessThanOrEqual(600);
    for (const id of r.citedIds as string[]) expect(r.answer).toContain(id);
    expect((r.answer as string).toLowerCase()).toContain('lmstudio');
    const leaves = new Set(queryRows(s.store.db, "SELECT id FROM lcm_summaries WHERE kind = 'leaf' AND session_id = ?", [deep.sessionId]).map((x) => String(x.id)));
    for (const id of r.citedIds as string[]) expect(leaves.has(id)).toBe(true);

    const byIds = await call('lcm_expand_query', { prompt: 'what was asked?', summaryIds: [(r.citedIds as string[])[0]!], conversationId: deep.conversationId });
    expect(byIds).toMatchObject({ ok: true, citedIds: expect.any(Array), answer: expect.stringContaining('No language model') });
    expect(await call('lcm_expand_query', { prompt: 'x' })).toMatchObject({ ok: false, reason: expect.stringContaining('needs a query') });
    expect(await call('lcm_expand_query', { prompt: 'x', summaryIds: [(r.citedIds as string[])[0]!] })).toMatchObject({ ok: false, reason: expect.stringContaining('lie outside') });
  });

  it('across conversations it ranks them, expands only the top few and reports the rest as skipped', async () => {
    const r = await call('lcm_expand_query', { prompt: 'what was done?', query: 'the', allConversations: true });
    expect(r.ok).toBe(true);
    const breakdown = r.conversationBreakdown as { conversationId: number; status: string }[];
    expect(breakdown.filter((b) => b.status === 'ok')).toHaveLength(s.lcm.config.maxConversations);
    expect(breakdown.some((b) => b.status === 'skipped')).toBe(true);
    expect(r.truncated).toBe(true);
    expect(r.truncatedBecause).toEqual(expect.arrayContaining([expect.stringContaining('not expanded')]));
    expect(r.sourceConversationIds).toEqual(breakdown.filter((b) => b.status === 'ok').map((b) => b.conversationId));
  });
});
