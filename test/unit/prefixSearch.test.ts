import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { callTool as call } from './helpers/memoryCall';
import { openTemp } from './helpers/tempStore';

/**
 * As-you-type search (the memory browser sends what is typed with a trailing *): every prefix
 * of a word, from four letters on, finds the texts holding the word, and a hit found by a
 * prefix scores what the whole word scores, on a real store.
 */
const TEXTS = [
  'We deployed the new configuration to staging on Monday.',
  'Deploys happen on Tuesday; the happiest team copies the query plan.',
  'The organization prefers a careful review of every dependency.',
];
const WORDS = ['deployed', 'deploys', 'configuration', 'staging', 'happiest', 'copies', 'query', 'organization', 'careful', 'dependency'];

let s: Services;
beforeAll(async () => {
  s = await openTemp();
  // Other texts, so the words above are rare and their BM25 is well above the floor.
  for (let i = 0; i < 40; i++) await call(s, 'remember', { statement: `Filler note ${i} about lunch, weather and the train timetable.` });
  for (const statement of TEXTS) await call(s, 'remember', { statement });
});
afterAll(() => s.store.close());

type Hit = { text: string; score: number };
const search = async (query: string) => (await call(s, 'search_text', { query, top_k: 10 })).hits as Hit[];

describe('a typed prefix', () => {
  it('finds the word from every prefix of four letters or more, the whole word with a star included', async () => {
    const missed: string[] = [];
    for (const word of WORDS) {
      const holder = TEXTS.find((t) => t.toLowerCase().includes(word)) as string;
      for (let n = 4; n <= word.length; n++) {
        const hits = await search(`${word.slice(0, n)}*`);
        if (!hits.some((h) => h.text === holder)) missed.push(`${word.slice(0, n)}*`);
      }
    }
    expect(missed).toEqual([]);
  });

  it('scores a hit as the whole word scores it', async () => {
    for (const [typed, word] of [['stagin*', 'staging'], ['configura*', 'configuration'], ['deploy*', 'deployed'], ['copi*', 'copies']] as const) {
      const byWord = new Map((await search(word)).map((h) => [h.text, h.score]));
      const byPrefix = await search(typed);
      const holder = TEXTS.find((t) => t.toLowerCase().includes(word)) as string;
      const hit = byPrefix.find((h) => h.text === holder);
      expect(hit, typed).toBeDefined();
      expect(hit!.score, typed).toBeGreaterThan(0);
      // A prefix matches more words than the one typed out ("deploy*" also "deploys"), so only the holder's score is compared.
      if (word === 'staging' || word === 'configuration') expect(hit!.score, typed).toBe(byWord.get(holder));
    }
  });
});
