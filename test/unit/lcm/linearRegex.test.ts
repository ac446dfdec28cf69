import { describe, expect, it } from 'vitest';
import { LinearRegex, OVERLAP, WINDOW_MAX } from '../../../src/core/lcm/linearRegex';
import { testText } from '../../../src/core/lcm/grepText';
import { REDOS_CASES } from './grepReference';


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
      const re = LinearRegex.compile(source, flags) as LinearRegex;
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
      const re = LinearRegex.compile('<y+>', '') as LinearRegex;
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
      const r = LinearRegex.compile(`(foo|bar)${i}[a-z]+\\d{2,5}`, 'i') as LinearRegex;
      expect(r.firstMatch(`x FOO${i}abc123`)).toEqual({ index: 2, length: 9 + String(i).length });
      r.dispose();
    }
  });

  it('refuses what needs backtracking by name, and passes on RE2\'s own message', () => {
    expect(LinearRegex.compile('(?<!x)y', '')).toEqual({ error: expect.stringContaining('a lookbehind') });
    expect(LinearRegex.compile('a{2000}', '')).toEqual({ error: expect.stringContaining('invalid repetition size') });
  });
});
