import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFtsTableSql } from '../../src/core/search/ftsSearch';
import { phrasesOfMatch, snippetOf, termSnippetOf } from '../../src/core/search/snippet';
import { analyze } from '../../src/core/text/analyzer';
import { CLOSE, ELLIPSIS, OPEN, originalShape, termShape } from './helpers/excerptCompare';
import { loadSqlJs, type Database } from '../../src/core/store/sqlite';
import { WASM_PATH } from './helpers/tempStore';

/**
 * The excerpt's word matching (one pass over the tokens for all the query's words, a bit per
 * word, up to 32 words; past that every phrase is compared token by token) against SQLite's own
 * snippet(): the word in bit 31, the same word as a prefix and not, a word repeated in a phrase,
 * ASCII words matching tokens that hold other characters, and queries past 32 words.
 */

const WORDS = Array.from({ length: 40 }, (_, i) => `w${i.toString(36)}x${'abcdefghij'[i % 10] as string}`);

const TEXTS = [
  `${WORDS.slice(0, 31).join(' ')} filler text here and more filler ${WORDS[31] as string} then the end of it`,
  `Start ${WORDS[31] as string} — middle ${WORDS.slice(20, 40).join(', ')} — end. ${WORDS[39] as string}!`,
  'run the runner, RUN it: run run running runs; rerun. npm run dev && npm run devtools',
  'CAFÉ café Cafe cafés caféine Çafe — ＣＡＦＥ wide letters, cafe\u0301 combined, naïve NAIVE naive',
  'x'.repeat(300) + ' run ' + 'y '.repeat(200) + 'dev npm run dev run',
  'ẞtraße STRASSE straße strasse İstanbul istanbul ıstanbul',
];

let db: Database;
beforeAll(async () => {
  const SQL = await loadSqlJs(WASM_PATH);
  db = new SQL.Database();
  db.run(createFtsTableSql('t'));
  TEXTS.forEach((t, i) => db.run('INSERT INTO t(docid, terms, body) VALUES (?, ?, ?)', [i + 1, analyze(t), t]));
});
afterAll(() => db.close());

/** SQLite's snippet() of the terms column: the FTS4 rules over the same terms, and the excerpt of the original text shows the same terms. */
function compare(match: string, tokens: number): number {
  const rows = db.exec(`SELECT docid, body, terms, snippet(t, '${OPEN}', '${CLOSE}', '${ELLIPSIS}', 0, ${tokens}) FROM t WHERE t MATCH ?`, [match])[0]?.values ?? [];
  const phrases = phrasesOfMatch(match);
  for (const [docid, body, terms, want] of rows) {
    const label = `${match} (${tokens}) doc ${String(docid)}`;
    expect(termSnippetOf(String(terms), phrases, tokens, OPEN, CLOSE, ELLIPSIS), label).toBe(want);
    expect(originalShape(snippetOf(String(body), phrases, tokens, OPEN, CLOSE, ELLIPSIS)), label).toEqual(termShape(String(want)));
  }
  return rows.length;
}

describe('excerpt word matching', () => {
  it('equals SQLite snippet() with 32 words (the last in the sign bit), 33 and 40 words (compared phrase by phrase)', () => {
    let compared = 0;
    for (const n of [32, 33, 40]) {
      const words = WORDS.slice(0, n);
      for (const match of [words.map((w) => `"${w}"`).join(' OR '), `"${words[31] as string}"`, words.slice(28).map((w) => `"${w}*"`).join(' OR ')]) {
        for (const tokens of [7, 16, 64]) compared += compare(match, tokens);
      }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('equals SQLite snippet() for a word as prefix and not, a word repeated in a phrase, and words that fold from other characters', () => {
    const matches = ['"run" "run*"', '"run run"', '"npm run dev"', '"run*"', '"npm" "run" "dev"', '"cafe"', '"caf*"', '"cafe" OR "naive"', '"naive cafe*"', '"strasse"', '"straße"', '"istanbul"', '"wide letters"', '"dev*" OR "npm"', '"running"', '"runs" OR "cafés"'];
    let compared = 0;
    // Each phrase in the index's spelling, a prefix folded but not stemmed, as parseMatchQuery writes it.
    const analyzed = (m: string) => m.replace(/"([^"*]*)(\*?)"/g, (_, p: string, star: string) => `"${star ? p.toLowerCase() : analyze(p)}${star}"`);
    for (const match of matches) for (const tokens of [3, 7, 16, 24]) compared += compare(analyzed(match), tokens);
    expect(compared).toBeGreaterThan(80);
  });
});
