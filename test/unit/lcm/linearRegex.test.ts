import { describe, expect, it } from 'vitest';
import { LinearRegex, OVERLAP, WINDOW_MAX } from '../../../src/core/lcm/linearRegex';
import { testText } from '../../../src/core/lcm/grepText';
import { backtrackFree } from '../../../src/core/lcm/backtrackFree';
import { REDOS_CASES, rng } from './grepReference';


/** The answer a backtracking engine gives where it finishes: what RE2 must equal on texts it can. */
function jsFirst(source: string, flags: string, text: string): { index: number; length: number } | null {
  const m = new RegExp(source, `${flags}u`).exec(text);
  return m ? { index: m.index, length: m[0].length } : null;
}

describe('LinearRegex (RE2)', () => {
  it('runs every classic catastrophic pattern over its provoking text in linear time', () => {
    for (const [pattern, text] of REDOS_CASES) {
      const re = LinearRegex.compile(pattern, '');
      if ('error' in re) throw new Error(`${pattern}: ${re.error}`);
      const t0 = performance.now();
      const out = testText(re, `${text}\n${text}`, true);
      const ms = performance.now() - t0;
      re.dispose();
      // Two cores shared by several agents: a generous bound, far below the >30 s backtracking took.
      expect(ms, pattern).toBeLessThan(2000);
      // Where JavaScript finishes fast (short texts), both engines agree.
      const short = text.slice(0, 12) + text.slice(-1);
      const again = LinearRegex.compile(pattern, '') as LinearRegex;
      expect(again.firstMatch(short), pattern).toEqual(jsFirst(pattern, '', short));
      again.dispose();
      expect(out === null || out.count >= 1, pattern).toBe(true);
    }
  });

  it('finds the same matches as JavaScript across window edges of a long text, with surrogate pairs', () => {
    const line = (i: number) => `line ${i} 😀 key=${i % 97} é ${'x'.repeat(i % 50)}\n`;
    let text = '';
    for (let i = 0; text.length < WINDOW_MAX * 2.2; i++) text += line(i);
    for (const [source, flags] of [['key=9[0-6]', ''], ['^line 1\\d* 😀', 'm'], ['😀 KEY=(\\d+) É', 'i'], ['x{40,}\\n', ''], ['\\d+$', '']] as const) {
      const re = LinearRegex.compile(source, flags, true) as LinearRegex;
      const js = new RegExp(source, `${flags}gu`);
      const all = [...text.matchAll(js)].map((m) => ({ index: m.index, length: m[0].length }));
      const ours: { index: number; length: number }[] = [];
      for (let m = re.firstMatch(text); m && ours.length < 100_000; m = re.firstMatch(text, m.index + Math.max(1, m.length))) ours.push(m);
      re.dispose();
      expect(ours.length, source).toBe(all.length);
      expect(ours, source).toEqual(all);
    }
  });

  it('finds a match up to OVERLAP characters long whole where it straddles two windows', () => {
    const long = `<${'y'.repeat(OVERLAP - 2)}>`;
    for (const at of [WINDOW_MAX - OVERLAP, WINDOW_MAX - 10, WINDOW_MAX - OVERLAP / 2]) {
      const text = `${'n'.repeat(at)}${long}${'n'.repeat(1000)}`;
      const re = LinearRegex.compile('<y+>', '', true) as LinearRegex;
      expect(re.firstMatch(text), String(at)).toEqual({ index: at, length: long.length });
      re.dispose();
    }
  });

  it('survives texts far beyond its 16 MB heap and thousands of compiled patterns (each disposed)', () => {
    const big = `${'a'.repeat(12 * 1024 * 1024)}!`;
    const re = LinearRegex.compile('(.*a){20}', '') as LinearRegex;
    expect(re.firstMatch(big)).toEqual({ index: 0, length: WINDOW_MAX });
    re.dispose();
    for (let i = 0; i < 1500; i++) {
      const r = LinearRegex.compile(`(foo|bar)${i}[a-z]+\\d{2,5}`, 'i', true) as LinearRegex;
      expect(r.firstMatch(`x FOO${i}abc123`)).toEqual({ index: 2, length: 9 + String(i).length });
      r.dispose();
    }
  });

  it('refuses what needs backtracking by name, and passes on RE2\'s own message', () => {
    expect(LinearRegex.compile('(?<!x)y', '')).toEqual({ error: expect.stringContaining('a lookbehind') });
    expect(LinearRegex.compile('a{2000}', '')).toEqual({ error: expect.stringContaining('invalid repetition size') });
  });
});

describe('patterns JavaScript runs in linear time (backtrackFree)', () => {
  it('admits plain sequences and a last open-ended repeat, never a catastrophic pattern', () => {
    for (const p of ['npm run dev', 'chatbot-ui', '"documentId":"1[0-9]"', '2025-11-1[0-9]T[0-9]{2}:[0-9]{2}', 'localhost:[0-9]+', '[0-9a-f]{40}', '^error: \\d+', 'foo|bar|baz', '\\bimport\\b']) {
      expect(backtrackFree(p, ''), p).toBe(true);
    }
    expect(backtrackFree('ollama', 'i')).toBe(true);
    for (const [p] of REDOS_CASES) expect(backtrackFree(p, ''), p).toBe(false);
    // Optional, ranged, lazy, grouped or mid-pattern open repeats; what the engines read differently.
    for (const p of ['colou?r', 'a{2,5}', 'a+?', '(ab)', 'a+b', '\\w+@', 'a.b', 'a\\sb', '[[:alpha:]]', '\\pL', 'a{65}', '\\b+']) expect(backtrackFree(p, ''), p).toBe(false);
    expect(backtrackFree('\\bword', 'i')).toBe(false);
    expect(backtrackFree('^line', 'm')).toBe(false);
  });

  it('hands a text over 1 M characters to RE2, with the same answers', () => {
    const text = Array.from({ length: 60_000 }, (_, i) => `row ${i} key=${i % 97};`).join('\n');
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const fast = LinearRegex.compile('key=9[0-6]', '') as LinearRegex;
    const re2 = LinearRegex.compile('key=9[0-6]', '', true) as LinearRegex;
    expect(fast.engineName).toBe('javascript');
    expect(testText(fast, text, true)).toEqual(testText(re2, text, true));
    expect(testText(fast, text, true)?.count).toBe(1000);
    fast.dispose();
    re2.dispose();
  });

  it('gives the answers RE2 gives, match for match, on random texts', () => {
    const next = rng(5);
    const alphabet = ['a', 'b', 'A', 'B', '1', '9', ' ', '\n', '\r', '-', ':', '"', 'é', 'ſ', 'K', 'k', 's', '😀', '\u2028', '_'];
    const patterns: [string, string][] = [['ab', ''], ['a[b1]', 'i'], ['\\d{2}', ''], ['^a', ''], ['b$', ''], ['\\ba', ''], ['[^ab]{3}', ''], ['k|s', 'i'], ['a1+', ''], ['😀[a-z]*', 'i'], ['"[0-9a-f]', ''], ['\\w\\W', ''], ['-\\:', '']];
    for (const [source, flags] of patterns) {
      const fast = LinearRegex.compile(source, flags) as LinearRegex;
      const re2 = LinearRegex.compile(source, flags, true) as LinearRegex;
      expect(re2.engineName).toBe('re2');
      for (let i = 0; i < 400; i++) {
        const text = Array.from({ length: Math.floor(next() * 80) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
        expect(testText(fast, text, true), `${source} /${flags} on ${JSON.stringify(text)}`).toEqual(testText(re2, text, true));
      }
      fast.dispose();
      re2.dispose();
    }
  });
});
