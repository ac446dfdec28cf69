import * as fs from 'node:fs';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { buildEncoder, countTokens, firstTokens, withDecodeTable } from '../../src/core/text/tokens';
import { transcriptFixtures } from './helpers/fixtures';

/** Cold open (issue 2): the o200k tables are built by tokens.ts, not by js-tiktoken's constructor; they must be the same. */

interface Tables {
  rankMap: Map<string, number>;
  textMap: Map<number, Uint8Array>;
}

const tablesOf = (t: Tiktoken) => t as unknown as Tables;

function textsUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? textsUnder(p) : [fs.readFileSync(p, 'utf8').slice(0, 20_000)];
  });
}

describe('o200k tables', () => {
  it('are entry for entry those of the library constructor, and encode and decode every fixture identically', () => {
    const reference = new Tiktoken(o200k);
    const counting = buildEncoder();
    // A process that only counts never holds the table back from rank to bytes.
    expect(tablesOf(counting).textMap.size).toBe(0);
    const ours = withDecodeTable(counting);
    const [a, b] = [tablesOf(reference), tablesOf(ours)];
    expect(b.rankMap.size).toBe(a.rankMap.size);
    expect(b.textMap.size).toBe(a.textMap.size);
    expect(a.rankMap.size).toBeGreaterThan(199_000);
    for (const [key, rank] of a.rankMap) if (b.rankMap.get(key) !== rank) expect.fail(`rank of ${key}: ${b.rankMap.get(key)} ≠ ${rank}`);
    for (const [rank, bytes] of a.textMap) {
      const mine = b.textMap.get(rank);
      if (!mine || Buffer.compare(Buffer.from(mine), Buffer.from(bytes)) !== 0) expect.fail(`bytes of rank ${rank} differ`);
    }

    const texts = [...textsUnder(transcriptFixtures()), 'héllo wörld — 東京 🙂 \r\n\t  spaces', ''];
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) {
      const tokens = reference.encode(text, [], []);
      expect(ours.encode(text, [], [])).toEqual(tokens);
      expect(countTokens(text)).toBe(tokens.length);
      expect(ours.decode(tokens)).toBe(reference.decode(tokens));
      expect(firstTokens(text, 7)).toBe(tokens.length <= 7 ? text : reference.decode(tokens.slice(0, 7)).replace(/\uFFFD+$/, ''));
    }
  });
});

describe('long pieces (a run of letters or punctuation the library merges in quadratic time)', () => {
  it('are counted and cut to the same tokens as the library gives', () => {
    const reference = new Tiktoken(o200k);
    let seed = 7;
    const random = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length]).join('');
    const texts = [
      random('abcdefghijklmnopqrstuvwxyz', 2500),
      '-'.repeat(1800) + ' then words',
      random('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 3000),
      random('東京都の最新情報髪毛暇潰', 1200),
      'a'.repeat(1000) + 'b'.repeat(1000),
      random('ab', 2000),
    ];
    for (const text of texts) {
      const tokens = reference.encode(text, [], []);
      expect(countTokens(text)).toBe(tokens.length);
      expect(firstTokens(text, 100)).toBe(reference.decode(tokens.slice(0, 100)).replace(/\uFFFD+$/, ''));
    }
  });
});
