import { describe, expect, it } from 'vitest';
import { holdsFolded, literalCheck, testText } from '../../../src/core/lcm/grepText';
import { compiled, rng } from './grepReference';

/**
 * The checks lcm_grep makes before (and instead of) its regex must agree with the regex run on
 * the decoded text: compared on random bytes (ASCII in both cases, multi-byte UTF-8, invalid
 * sequences) against the slow reference.
 */



/** Random bytes drawn from pieces that meet the literals' letters in every case, beside non-ASCII and broken UTF-8. */
function randomBytes(next: () => number, pieces: readonly Buffer[], n: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) parts.push(pieces[Math.floor(next() * pieces.length)] as Buffer);
  return Buffer.concat(parts);
}

describe('lcm_grep text checks', () => {
  const pieces = ['o', 'O', 'l', 'L', 'a', 'A', 'm', 'M', 'lla', 'OLL', 'ama', '@', '`', '[', '{', ':', '1', ' ', 'é', 'ſ', 'K', 'k', 'ß', '日本']
    .map((p) => Buffer.from(p, 'utf8'))
    .concat([Buffer.from([0xc3]), Buffer.from([0xe6, 0x97]), Buffer.from([0xff]), Buffer.from([0x80])]);

  it('find a literal in raw bytes, letters in either case, exactly where /i finds it in the decoded text', () => {
    const next = rng(7);
    let found = 0;
    for (const pattern of ['/ollama/i', '/OLLAMA/i', '/lla:1/i', '/@ama`/i', '/a\\[/i', '/{m/i', '/ol/i']) {
      const p = compiled(pattern);
      const check = literalCheck(p);
      expect(check?.bytes, pattern).toBeDefined();
      const literal = new RegExp(p.literals[0]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'i');
      for (let i = 0; i < 3000; i++) {
        const bytes = randomBytes(next, pieces, 1 + Math.floor(next() * 40));
        const text = bytes.toString('utf8');
        const want = literal.test(text);
        expect(holdsFolded(bytes, Buffer.from(p.literals[0]!.toLowerCase(), 'latin1')), `${pattern} in ${JSON.stringify(text)}`).toBe(want);
        expect(check!.bytes!(bytes), `${pattern} in ${JSON.stringify(text)}`).toBe(check!.text(text));
        if (want) found++;
      }
    }
    expect(found).toBeGreaterThan(100);
  });

  it('give no byte check where /i folds beyond ASCII', () => {
    // RE2 reads Unicode: /i matches ſ for s and K for k.
    expect(literalCheck(compiled('/ols/i'))).toBeUndefined();
    expect(literalCheck(compiled('/{mk/iu'))).toBeUndefined();
    expect(literalCheck(compiled('/café/i'))).toBeUndefined();
  });

  it('count matches as a global match() does, up to 1,000 per text, and find the first', () => {
    const next = rng(11);
    for (const pattern of ['/oll?a/i', 'l+a', '[0-9]', 'a']) {
      const re = compiled(pattern).regex;
      for (let i = 0; i < 300; i++) {
        const text = randomBytes(next, pieces, Math.floor(next() * (i % 10 === 0 ? 3000 : 60))).toString('utf8');
        const all = [...text.matchAll(new RegExp(re.source, `${re.flags}gu`))];
        const out = testText(re, text, true);
        if (!all.length) {
          expect(out).toBeNull();
          continue;
        }
        expect(out, `${pattern} on ${JSON.stringify(text.slice(0, 80))}`).toEqual({ index: all[0]!.index, length: all[0]![0].length, count: Math.min(1000, all.length) });
      }
    }
  });
});
