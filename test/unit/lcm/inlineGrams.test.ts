import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCK_EVENTS, blocksHolding, buildInlineGrams, fold, INLINE_GRAMS, INLINE_GRAMS_SQL, inlineGramKeys } from '../../../src/core/lcm/inlineGrams';
import { DEFAULT_GREP_OPTIONS, LcmGrep, type GrepRequest } from '../../../src/core/lcm/lcmGrep';
import { LinearRegex } from '../../../src/core/lcm/linearRegex';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { writeClaudeSession } from '../helpers/claudeTranscript';
import { transcriptFixtures } from '../helpers/fixtures';
import { tempHome } from '../helpers/tempStore';
import { bruteForce, compiled } from './grepReference';
import { openLcm } from './lcmFixture';

/**
 * lcm_grep narrows inline events by a gram filter per block of events (inlineGrams.ts). Every
 * answer must be the one the plain scan gives: the same patterns run with the filter and without
 * it, on the real fixtures plus a session of texts whose case folding goes beyond ASCII.
 */

const ALL = { all: true as const, how: 'all conversations' };

/** Texts where /i matches characters other than their ASCII or simple lower case. */
const FOLDING: string[] = [
  'the proceſſedEntries count was ſtale', // ſ matches s under /i
  'a KELVIN reading of 300 \u212A', // the Kelvin sign matches k
  'ΟΔΟΣ and οδος and οδοσ in Greek', // σ, ς and Σ are one class
  'ЗАПИСАТЬ в журнал, потом записать снова',
  'die STRAẞE und die straße',
  'İstanbul and ıstanbul and Istanbul',
  'Deseret 𐐀𐐁𐐂 and 𐐨𐐩𐐪 side by side',
  'µ-law and μ-law and Μ-LAW',
  'ǅungla ǆungla Ǆungla',
];

const PATTERNS = [
  // Literals inside words and across punctuation, exact and case-insensitive.
  'ollama', '/OLLAMA/i', 'localhost:[0-9]+', '/LOCALHOST:[0-9]+/i', 'ocalhos', 'rocessedEntr', '/processedentries/i', 'tatus', '/STATUS/i',
  'chatbot-ui', 'npm (run|test)', '"documentId":"1[0-9]"', '\\d{4}-\\d{2}-\\d{2}', 'json"', '/ollama/iu', 'ntriesCoun',
  // Cyrillic, Greek and the other folds above.
  'запис[а-я]+', '/ЗАПИСАТЬ/i', '/записать/i', '/οδοσ/i', '/ΟΔΟς/i', '/kelvin reading of 300 k/i', '/straße/i', '/STRASSE/i',
  '/istanbul/i', '/İSTANBUL/i', '/𐐨𐐩𐐪/i', '𐐀𐐁𐐂', '/µ-LAW/i', '/ǆungla/i',
  // Alternations and patterns with no usable literal: scanned as before.
  'ollama|lmstudio', '(?i)ollama', '[a-z]{30}', 'x?y?z?', '.',
];

let s: Services;
let home: string;
beforeAll(async () => {
  home = tempHome('inline-grams');
  s = await openLcm({}, home);
  const folder = path.join(home, 'transcripts');
  writeClaudeSession(folder, 'f01d0000-0000-4000-8000-000000000001', FOLDING.map((t, i) => (i % 2 ? { assistant: t } : { user: t })));
  await s.importer.importPaths([transcriptFixtures(), folder]);
  await s.lcm.buildAll();
});
afterAll(() => s.store.close());

const request = (pattern: string, sort: GrepRequest['sort']): GrepRequest => ({ pattern, mode: 'regex', scope: 'messages', limit: 200, sort });

async function bothWays(pattern: string, sort: GrepRequest['sort']) {
  const on = await new LcmGrep(s.store, { ...DEFAULT_GREP_OPTIONS, timeBoundMs: Infinity }).grep(request(pattern, sort), ALL);
  const off = await new LcmGrep(s.store, { ...DEFAULT_GREP_OPTIONS, timeBoundMs: Infinity, inlineGrams: false }).grep(request(pattern, sort), ALL);
  if (!on.ok || !off.ok) throw new Error(`${pattern}: refused`);
  const answer = (r: typeof on) => (r.ok ? { matches: r.matches, count: r.count, truncated: r.truncated } : r);
  expect(answer(on), `${pattern} by ${sort}`).toEqual(answer(off));
  return { on, off };
}

describe('the inline events gram filter', () => {
  it('gives the answers of the plain scan, and reads fewer inline events where a literal is rare', async () => {
    const narrowed: string[] = [];
    for (const pattern of PATTERNS) {
      for (const sort of ['recency', 'relevance'] as const) {
        const { on, off } = await bothWays(pattern, sort);
        const [a, b] = [on, off].map((r) => (r.ok && 'scan' in r ? r.scan?.messages : undefined));
        if (a?.prefilter === 'grams' && sort === 'relevance') {
          expect(a.candidates, pattern).toBeLessThanOrEqual(b?.candidates ?? 0);
          if (a.candidates < (b?.candidates ?? 0)) narrowed.push(pattern);
        }
      }
    }
    // The folding session's patterns each find their texts, so the comparisons above compared something.
    // Those the index cannot narrow (a fold beyond ASCII, a literal inside words) go through the filter.
    for (const [p, prefilter] of [['/processedentries/i', 'grams'], ['/kelvin reading of 300 k/i', 'fts'], ['/οδοσ/i', 'grams'], ['/ЗАПИСАТЬ/i', 'grams'], ['/straße/i', 'grams'], ['/istanbul/i', 'grams'], ['/𐐨𐐩𐐪/i', 'grams'], ['/µ-LAW/i', 'fts'], ['/ǆungla/i', 'grams']]) {
      const r = await new LcmGrep(s.store, DEFAULT_GREP_OPTIONS).grep(request(p as string, 'relevance'), ALL);
      expect(r.ok && r.count, p).toBeGreaterThan(0);
      expect(r.ok && 'scan' in r && r.scan?.messages?.prefilter, p).toBe(prefilter);
    }
    expect(narrowed.length, narrowed.join(', ')).toBeGreaterThanOrEqual(10);
    // And the plain scan is itself what a JavaScript regex over every text finds.
    const r = await new LcmGrep(s.store, DEFAULT_GREP_OPTIONS).grep(request('/OLLAMA/i', 'relevance'), ALL);
    const expected = bruteForce(s, /OLLAMA/i, 'messages');
    expect(expected.size).toBeLessThanOrEqual(200);
    expect(r.ok && new Set(r.matches.map((m) => m.id))).toEqual(expected);
  });

  it('keeps up with events written later: new sessions and new texts of existing events', async () => {
    const folder = path.join(home, 'later');
    const id = 'f01d0000-0000-4000-8000-000000000002';
    writeClaudeSession(folder, id, [{ user: 'first words about zyxwvutsrq' }, { assistant: 'nothing yet' }]);
    await s.importer.importPaths([folder]);
    const found = async (p: string) => {
      const r = await new LcmGrep(s.store, DEFAULT_GREP_OPTIONS).grep(request(p, 'relevance'), ALL);
      if (!r.ok || !('scan' in r)) throw new Error('refused');
      expect(r.scan?.messages?.prefilter, p).toBe('grams');
      return r.count;
    };
    expect(await found('/ZYXWVUTSRQ/i')).toBe(1);
    expect(await found('/qponmlkjih/i')).toBe(0);
    // A block gets its filter once an id past it exists: a longer session completes this one's.
    writeClaudeSession(folder, 'f01d0000-0000-4000-8000-000000000003', Array.from({ length: 70 }, (_, i) => ({ assistant: `filler line ${i}` })));
    await s.importer.importPaths([folder]);
    const ids = queryRows(s.store.db, "SELECT e.id FROM events e WHERE e.text LIKE '%zyxwvutsrq%'").map((r) => Number(r.id));
    const keys = inlineGramKeys(compiled('/ZYXWVUTSRQ/i'))!;
    const filtered = blocksHolding(s.store.db, keys)!;
    expect(Math.max(...ids)).toBeLessThan(filtered.upTo);
    expect(filtered.blocks).toContain(Math.floor(ids[0]! / BLOCK_EVENTS));
    expect(await found('/ZYXWVUTSRQ/i')).toBe(1);
    // The same events rewritten (same keys): the second event's text is replaced in its row, in a block that has its filter.
    writeClaudeSession(folder, id, [{ user: 'first words about zyxwvutsrq' }, { assistant: 'now QPONMLKJIH is here' }, { user: 'and ΨΩΦΧΥ too' }]);
    await s.importer.importPaths([folder]);
    expect(await found('/qponmlkjih/i')).toBe(1);
    expect(await found('/ψωφχυ/i')).toBe(1);
  });

  it('is rebuilt from the stored events by its migration, with progress', async () => {
    const db = s.store.db;
    const before = queryRows(db, `SELECT block, bits FROM ${INLINE_GRAMS} WHERE block >= 0 ORDER BY block`).length;
    expect(before).toBeGreaterThan(3);
    const keys = inlineGramKeys(compiled('/OLLAMA/i'))!;
    const held = blocksHolding(db, keys)!;
    db.run(`DROP TABLE ${INLINE_GRAMS}`);
    expect(blocksHolding(db, keys)).toBeUndefined(); // no table: every inline event is read, as before
    db.run(INLINE_GRAMS_SQL);
    const seen: [number, number][] = [];
    buildInlineGrams(db, (done, total) => seen.push([done, total]));
    expect(seen.at(-1)?.[0]).toBe(seen.at(-1)?.[1]);
    expect(seen.length).toBeGreaterThan(2);
    expect(queryRows(db, `SELECT block FROM ${INLINE_GRAMS} WHERE block >= 0`).length).toBe(before);
    // The filters read before the rebuild are not used again: the table's token changed.
    const rebuilt = blocksHolding(db, keys)!;
    expect(rebuilt.of).toBe(held.of);
    for (const p of ['/OLLAMA/i', 'localhost:[0-9]+', '/ЗАПИСАТЬ/i', '/qponmlkjih/i']) await bothWays(p, 'relevance');
  });

  it('folds together every character RE2 and JavaScript match case-insensitively', () => {
    const cased = new Set<number>();
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      const c = String.fromCodePoint(cp);
      const lower = c.toLowerCase();
      const upper = c.toUpperCase();
      if (lower === c && upper === c) continue;
      cased.add(cp);
      for (const x of [lower, upper]) if ([...x].length === 1) cased.add(x.codePointAt(0) as number);
    }
    const all = [...cased];
    const text = all.map((cp) => String.fromCodePoint(cp)).join(' ');
    const split: string[] = [];
    for (const cp of all) {
      const source = `\\u{${cp.toString(16)}}`;
      const engines = [LinearRegex.compile(source, 'i', true), LinearRegex.compile(source, 'i')];
      for (const re of engines) {
        if ('error' in re) throw new Error(re.error);
        try {
          for (let m = re.firstMatch(text); m; m = re.firstMatch(text, m.index + m.length)) {
            const other = text.codePointAt(m.index) as number;
            if (fold(other) !== fold(cp)) split.push(`${cp.toString(16)} ~ ${other.toString(16)} (${re.engineName})`);
          }
        } finally {
          re.dispose();
        }
      }
    }
    expect(all.length).toBeGreaterThan(2000);
    expect(split).toEqual([]);
  }, 120_000);
});
