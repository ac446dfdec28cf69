import { describe, expect, it } from 'vitest';
import { tokenize } from '../../src/core/search/snippet';
import { analyzeSpans } from '../../src/core/text/analyzer';

/** The analyzer's own terms and places: what the index holds, which the excerpt scan must find. */
function referenceTokens(text: string): { start: number; end: number; folded: string }[] {
  const out: { start: number; end: number; folded: string }[] = [];
  analyzeSpans(text, (folded, start, end) => out.push({ start, end, folded }));
  return out;
}

// Letters that fold oddly (dotted I, final sigma, sharp s, ligatures, title case), combining
// marks alone and inside words, astral letters and emoji, lone surrogates, private use, digits
// of other scripts, and the ASCII punctuation around letters.
const POOL = [
  'a', 'Z', 'q', '0', '9', '_', '-', ' ', '.', '@', '[', '`', '{', '\n', '\t',
  'é', 'É', 'ï', 'Ç', 'e\u0301', '\u0301', '\u0345', 'İ', 'ı', 'Σ', 'σ', 'ς', 'ß', 'ẞ', 'ﬁ', 'ǅ', 'Ø', 'Å',
  'З', 'я', 'Ж', 'α', 'Ω', '中', '文', 'ア', '한', 'の', '髪', 'ー', 'ｶ', 'ﾞ', '\u3099', '㈱', '１', '١', '٣', '²', '½', 'Ⅻ',
  'running', 'Dependencies', 'apply', 'ing', 'ed', 'ies',
  '𝐀', '𝒜', '😀', '\u{20000}', '\ud800', '\udc00', '\ue000', '\u{f0000}', '\u200d', '\u00a0', '…', '’',
];

function randomText(seed: number, length: number): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += POOL[x % POOL.length] as string;
  }
  return out;
}

describe('excerpt tokenizer scanned by char code', () => {
  it('finds the same terms at the same places as the analyzer and compares them with query terms as the terms compare, on random mixed-script texts', () => {
    let tokens = 0;
    let compared = 0;
    let matched = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const text = randomText(seed, 1 + (seed % 97));
      const want = referenceTokens(text);
      const got = tokenize(text);
      expect(got.count, text).toBe(want.length);
      expect(got.starts, text).toEqual(want.map((t) => t.start));
      expect(got.ends, text).toEqual(want.map((t) => t.end));
      expect(got.terms, text).toEqual(want.map((t) => t.folded));
      tokens += want.length;
      // Query words: every folded token, and its prefixes, checked against every token both ways.
      const words = new Set<string>();
      for (const t of want) for (let n = 1; n <= t.folded.length; n++) words.add(t.folded.slice(0, n));
      for (const word of words) {
        want.forEach((t, i) => {
          for (const prefix of [false, true]) {
            const expected = prefix ? t.folded.startsWith(word) : t.folded === word;
            compared++;
            if (expected) matched++;
            if (got.is(i, word, prefix) !== expected) expect.fail(`token ${JSON.stringify(text.slice(t.start, t.end))} vs ${JSON.stringify(word)} (prefix ${prefix}) in ${JSON.stringify(text)}`);
          }
        });
      }
    }
    expect(tokens).toBeGreaterThan(2000);
    expect(matched).toBeGreaterThan(1000);
    expect(compared).toBeGreaterThan(matched * 2);
  });
});

describe('excerpt tokenizer buffers', () => {
  it('hold texts of thousands of tokens, and what tokenize returned stays as it was after later scans', () => {
    const long = randomText(7, 12_000);
    const short = randomText(8, 50);
    const want = referenceTokens(long);
    expect(want.length).toBeGreaterThan(2048); // past the buffers' first size, twice
    const first = tokenize(long);
    tokenize(short);
    tokenize(randomText(9, 9_000));
    expect(first.count).toBe(want.length);
    expect(first.starts).toEqual(want.map((t) => t.start));
    expect(first.ends).toEqual(want.map((t) => t.end));
    want.forEach((t, i) => {
      if (!first.is(i, t.folded, false)) expect.fail(`token ${i} ${JSON.stringify(long.slice(t.start, t.end))} no longer equals its folded form`);
    });
  });
});
