import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../src/core/history/historySchema';
import { FtsVocabulary, termTest } from '../../src/core/lcm/ftsVocabulary';
import { ftsPrefilter } from '../../src/core/lcm/regexPattern';
import { openServices, type Services } from '../../src/core/services';
import { readSnapshot } from '../../src/core/store/snapshot';
import { loadSqlJs, queryRows, queryScalar } from '../../src/core/store/sqlite';
import { analyze, ANALYSIS_VERSION, queryPhrases, stemWord } from '../../src/core/text/analyzer';
import { porterStem } from '../../src/core/text/porterStemmer';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

/**
 * One text analysis for every index and every query (issue 17, items 2 and 3): Japanese and
 * Chinese words found inside sentences, English words in any of their forms, natural-language
 * questions answered by partial matches, lcm_grep's regex narrowing still exact over the
 * analyzed index, and stores built by another analysis rebuilt from their journal.
 */

const JAPANESE = '髪の毛が薄くなってきたおじさん向けに、暇つぶしになる最新のスマホゲームを教えてください。';
const JAPANESE_WORDS = ['おじさん', '髪の毛', '暇つぶし', '最新', 'スマホ', 'ゲーム', '教えて'];
const CHINESE = '我们今天讨论了数据库索引的性能问题，建议先检查慢查询日志，然后为常用的过滤条件添加复合索引。';
const CHINESE_WORDS = ['数据库', '索引', '性能', '慢查询', '日志', '复合索引', '过滤条件'];
const SESSION = '7b3f0c1e-2d4a-4e8b-9c6d-5a1f2e3d4c5b';

/**
 * A real Claude Code transcript from the fixtures, its prompt and reply replaced by a Japanese
 * prompt and a Chinese reply (the fixtures hold no CJK text) under a session id of its own.
 */
function cjkTranscript(): string {
  const dir = tempHome('cjk-transcript');
  const source = path.join(transcriptFixtures(), 'claude-code/project-a/553dd2b5-8a53-4fbf-9db2-240632522fe5.jsonl');
  const lines = fs.readFileSync(source, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  const [user, assistant] = lines as [Record<string, { content: unknown }>, Record<string, { content: { text: string }[] }>];
  user.message!.content = JAPANESE;
  assistant.message!.content[0]!.text = CHINESE;
  const text = lines.map((l) => JSON.stringify(l).replaceAll('553dd2b5-8a53-4fbf-9db2-240632522fe5', SESSION)).join('\n');
  fs.mkdirSync(path.join(dir, 'project-cjk'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'project-cjk', `${SESSION}.jsonl`), `${text}\n`);
  return dir;
}

let s: Services;
beforeAll(async () => {
  s = await openTemp();
  await s.importer.importPaths([transcriptFixtures(), cjkTranscript()]);
});
afterAll(() => s.store.close());

type Hit = { snippet: string; matched: string };
const tool = async (name: string, input: object) => (await invokeTool(findTool(name)!, input, s, { client: 'claude-code' })) as Record<string, unknown>;
const chatSearch = async (query: string, limit = 20) => (await tool('chat_history', { mode: 'search', match: 'keyword', query, time_range: 'all', limit })) as { ok: boolean; hits: (Hit & { session_title: string | null })[]; total: number };
const grepFullText = async (pattern: string) => (await tool('lcm_grep', { pattern, mode: 'full_text', allConversations: true, limit: 50 })) as { ok: boolean; matches: (Hit & { id: number })[] };
const grepRegex = async (pattern: string) => (await tool('lcm_grep', { pattern, allConversations: true, limit: 50 })) as { ok: boolean; matches: { id: number }[] };

describe('Chinese, Japanese and Korean words inside sentences', () => {
  // First, before the tool-call log (which Recollect indexes too) holds these words from the calls below.
  it('a sentence typed without spaces, not quite as the prompt put it, finds the prompt by its pairs, as a partial match', async () => {
    const sentence = await chatSearch('最新のゲームを教えてほしい', 10);
    expect(sentence.total).toBe(0);
    expect(sentence.hits[0]).toMatchObject({ matched: 'partial', session_title: JAPANESE });
    expect(sentence.hits[0]?.snippet).toContain('[最新の]スマホ[ゲームを教えて]');
  });

  it('every word of a Japanese prompt and a Chinese reply is found by chat_history keyword search and lcm_grep full_text, as regex finds it, and highlighted whole', async () => {
    for (const word of [...JAPANESE_WORDS, ...CHINESE_WORDS]) {
      const found = await chatSearch(word);
      expect(found.ok, word).toBe(true);
      const hit = found.hits.find((h) => h.session_title === JAPANESE && h.snippet.includes(`[${word}]`));
      expect(hit, `chat_history finds ${word}`).toBeDefined();
      expect(hit?.matched).toBe('all');
      expect(hit?.snippet, word).toContain(`[${word}]`);
      const grep = await grepFullText(word);
      const regex = await grepRegex(word);
      expect(regex.matches.length, `regex finds ${word}`).toBeGreaterThan(0);
      expect(grep.matches.map((m) => m.id).sort(), `full_text finds what regex finds: ${word}`).toEqual(expect.arrayContaining(regex.matches.map((m) => m.id)));
      expect(grep.matches.find((m) => m.snippet.includes(`[${word}]`))?.matched, word).toBe('all');
    }
  });

  it('indexes runs of CJK characters as overlapping pairs, a lone character as itself, and folds full-width and half-width forms', () => {
    expect(analyze('髪の毛')).toBe('髪の の毛');
    expect(analyze('毛 が')).toBe('毛 が');
    expect(analyze('검색은 잘 된다')).toBe('검색 색은 잘 된다');
    expect(analyze('ｶﾞｲﾄﾞ ＡＢＣ')).toBe(analyze('ガイド abc'));
    expect(analyze('JSONを読む')).toBe('json を読 読む');
    // A query word is the phrase of its pairs; a lone character asks for the pairs it begins.
    expect(queryPhrases('髪の毛 毛')).toEqual([{ terms: ['髪の', 'の毛'], prefix: false, cjk: true }, { terms: ['毛'], prefix: true, cjk: true }]);
  });
});

describe('English words in any of their forms', () => {
  it('stems as Porter published, and keeps a stem that begins its word', () => {
    const porter: [string, string][] = [
      ['caresses', 'caress'], ['ponies', 'poni'], ['cats', 'cat'], ['feed', 'feed'], ['agreed', 'agre'], ['plastered', 'plaster'], ['motoring', 'motor'],
      ['sing', 'sing'], ['conflated', 'conflat'], ['hopping', 'hop'], ['falling', 'fall'], ['filing', 'file'], ['happy', 'happi'], ['relational', 'relat'],
      ['conditional', 'condit'], ['digitizer', 'digit'], ['vietnamization', 'vietnam'], ['operator', 'oper'], ['hopefulness', 'hope'], ['formaliti', 'formal'],
      ['triplicate', 'triplic'], ['electrical', 'electr'], ['goodness', 'good'], ['allowance', 'allow'], ['adjustable', 'adjust'], ['replacement', 'replac'],
      ['adoption', 'adopt'], ['dependencies', 'depend'], ['dependency', 'depend'], ['generalizations', 'gener'], ['controll', 'control'], ['roll', 'roll'],
    ];
    for (const [word, stem] of porter) expect(porterStem(word), word).toBe(stem);
    for (const forms of [['apply', 'applies', 'applied'], ['hope', 'hoping', 'hopes'], ['dependency', 'dependencies', 'dependent']]) {
      expect(new Set(forms.map(stemWord)).size, forms.join(' ')).toBe(1);
    }
    // Over every word of the real transcripts: a term begins its word (lcm_grep's narrowing relies on it).
    let words = 0;
    for (const r of queryRows(s.store.db, `SELECT body FROM ${HISTORY_FTS}`)) {
      for (const w of String(r.body).toLowerCase().match(/\b[a-z]+\b/g) ?? []) {
        words++;
        if (!w.startsWith(stemWord(w))) expect.fail(`${w} → ${stemWord(w)}`);
      }
    }
    expect(words).toBeGreaterThan(10_000);
  });

  it('finds a word of the real transcripts in every form it takes there, and "new npm dependency" finds the rule about new dependencies', async () => {
    const forms = queryRows(s.store.db, `SELECT docid, body FROM ${HISTORY_FTS}`).filter((r) => /\bsubagents?\b/i.test(String(r.body)));
    expect(forms.some((r) => /\bsubagents\b/i.test(String(r.body))) && forms.some((r) => /\bsubagent\b/i.test(String(r.body)))).toBe(true);
    const found = await chatSearch('subagent', 50);
    expect(found.ok).toBe(true);
    expect(found.total).toBeGreaterThanOrEqual(forms.length);
    await s.memory.remember({ statement: 'Ask the owner before adding new dependencies to package.json.' }, 'vitest');
    const rule = s.memory.searchText({ query: 'new npm dependency' });
    if (!rule.ok) throw new Error('refused');
    expect(rule.hits[0]).toMatchObject({ matched: 'partial', text: 'Ask the owner before adding new dependencies to package.json.' });
    expect(rule.hits[0]?.snippet).toContain('[new] [dependencies]');
    const all = s.memory.searchText({ query: 'new dependency' });
    expect(all.ok && all.hits[0]).toMatchObject({ matched: 'all' });
  });
});

describe('natural-language questions', () => {
  it('fill up with the best partial matches after the every-word ones, each saying which it is, on search_text, chat_history and lcm_grep full_text', async () => {
    for (const statement of ['The vite build cache lives in node_modules/.vite and is cleared by --force.', 'We decided to deploy the web app on Fridays only after review.', 'Cache keys include the lockfile hash.']) {
      await s.memory.remember({ statement }, 'vitest');
    }
    const question = 'Where does the vite build cache live?';
    const r = s.memory.searchText({ query: question, top_k: 5 });
    if (!r.ok) throw new Error('refused');
    expect(r.total).toBe(0);
    expect(r.hits.map((h) => [h.matched, h.text.slice(0, 20)])[0]).toEqual(['partial', 'The vite build cache']);
    expect(r.hits.every((h) => h.matched === 'partial')).toBe(true);
    // The snippet highlights what the hit holds.
    expect(r.hits[0]?.snippet).toContain('[vite] [build] [cache]');
    // Every-word hits first: a query two rows hold whole, and more rows in part.
    const mixed = s.memory.searchText({ query: 'cache lockfile', top_k: 5 });
    if (!mixed.ok) throw new Error('refused');
    expect(mixed.hits.map((h) => h.matched)).toEqual(['all', ...mixed.hits.slice(1).map(() => 'partial')]);
    expect(mixed.hits.length).toBeGreaterThan(1);
    // A question over the real transcripts.
    const history = await chatSearch('how did we fix the failing subagent tests yesterday?', 10);
    expect(history.ok).toBe(true);
    expect(history.hits.length).toBe(10);
    expect(history.hits.every((h) => h.matched === 'partial')).toBe(true);
    const grep = await grepFullText('how did we fix the failing subagent tests yesterday?');
    expect(grep.matches.length).toBeGreaterThan(10);
    expect(grep.matches.every((m) => m.matched === 'partial')).toBe(true);
  });
});

describe('lcm_grep regex narrowing over the analyzed index', () => {
  it('never leaves out a text that holds the literal, for thousands of literals cut from the real transcripts at random', () => {
    const rows = queryRows(s.store.db, `SELECT docid, body FROM ${HISTORY_FTS}`).map((r) => ({ docid: Number(r.docid), body: String(r.body) }));
    const vocabulary = new FtsVocabulary();
    let seed = 17;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    let checked = 0;
    let narrowed = 0;
    for (let i = 0; i < 1500; i++) {
      const source = rows[next(rows.length)]!.body;
      if (source.length < 4) continue;
      const at = next(source.length - 3);
      const literal = source.slice(at, at + 3 + next(18));
      const holding = rows.filter((r) => r.body.toLowerCase().includes(literal.toLowerCase())).map((r) => r.docid);
      const matches: string[] = [];
      const phrase = ftsPrefilter(literal);
      if (phrase) matches.push(phrase);
      const test = termTest(literal, false);
      const terms = test && vocabulary.matchingTerms(s.store.db, HISTORY_FTS, test);
      if (terms) matches.push(terms);
      for (const match of matches) {
        const found = new Set(queryRows(s.store.db, `SELECT docid FROM ${HISTORY_FTS} WHERE ${HISTORY_FTS} MATCH ?`, [match]).map((r) => Number(r.docid)));
        const missed = holding.filter((d) => !found.has(d));
        if (missed.length) expect.fail(`${JSON.stringify(literal)} → ${match} misses docs ${missed.join(', ')}`);
        narrowed++;
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(1000);
    expect(narrowed).toBeGreaterThan(500);
  });
});

describe('stores built by another text analysis', () => {
  it('are rebuilt from the journal on open, with progress, and then search with this analysis', async () => {
    const home = tempHome('old-analysis');
    const first = await openServices({ home, wasmPath: WASM_PATH });
    for (let i = 0; i < 30; i++) await first.memory.remember({ statement: `Deployment ${i} needs new dependencies approved; ${'padding '.repeat(40)}` }, 'vitest');
    // As a build with another analysis would have left it: its version in meta, its terms in the index.
    first.store.db.run("UPDATE meta SET value = 'old' WHERE key = 'text_analysis'");
    first.store.db.run("UPDATE memory_fts SET terms = 'dependencies'");
    first.store.checkpoint();
    first.store.close();
    const SQL = await loadSqlJs(WASM_PATH);
    const saved = () => {
      const db = new SQL.Database(readSnapshot(path.join(home, 'store.sqlite')));
      try {
        return queryScalar(db, "SELECT value FROM meta WHERE key = 'text_analysis'");
      } finally {
        db.close();
      }
    };
    expect(saved()).toBe('old');
    const progress: [number, number][] = [];
    const again = await openServices({ home, wasmPath: WASM_PATH, onReplayProgress: (done, total) => progress.push([done, total]) });
    try {
      expect(again.store.warnings.join('\n')).toContain(`built by text analysis old, this build uses ${ANALYSIS_VERSION}: the store was rebuilt from its journal`);
      expect(progress.length).toBeGreaterThan(10);
      expect(progress.at(-1)?.[0]).toBe(progress.at(-1)?.[1]);
      const found = again.memory.searchText({ query: 'new dependency', top_k: 50 });
      expect(found.ok && found.total).toBe(30);
      again.store.checkpoint();
      expect(saved()).toBe(ANALYSIS_VERSION);
    } finally {
      again.store.close();
    }
  });
});
