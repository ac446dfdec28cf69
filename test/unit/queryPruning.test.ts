import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { DocumentCounts, MATCH_BUDGET, MAX_WORDS_SEARCHED, OVER_BUDGET, prunedWords } from '../../src/core/memory/recall/queryPruning';
import { createFtsTableSql } from '../../src/core/search/ftsSearch';
import { analyze } from '../../src/core/text/analyzer';
import type { Database } from '../../src/core/store/sqlite';

/** The pruning rule on exact counts, each counted in full: what prunedWords must decide whatever it counts. */
function prunedExactly(db: Database, words: string[]) {
  const df = words.map((w) => Number(db.exec('SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?', [`"${w}"`])[0]?.values[0]?.[0] ?? 0));
  const order = words.map((w, i) => ({ w, n: df[i] as number })).sort((a, b) => a.n - b.n);
  const kept: string[] = [];
  const keptCounts: number[] = [];
  let budget = 0;
  let matching = 0;
  for (const { w, n } of order) {
    if (n > 0 && matching > 0 && (budget + n > MATCH_BUDGET || matching >= MAX_WORDS_SEARCHED)) continue;
    kept.push(w);
    keptCounts.push(n);
    budget += n;
    if (n > 0) matching++;
  }
  return { kept, keptCounts, matches: budget };
}

describe('query pruning', () => {
  it('keeps the same words with the same counts as exact counting would, counting a common word only as far as the budget', async () => {
    const SQL = await initSqlJs({ locateFile: (f: string) => createRequire(import.meta.url).resolve(`sql.js/dist/${f}`) });
    const db = new SQL.Database() as unknown as Database;
    db.run(createFtsTableSql('memory_fts', ['ref']));
    let seed = 7;
    const next = () => ((seed = (seed * 1664525 + 1013904223) >>> 0), seed / 2 ** 32);
    const vocab = Array.from({ length: 400 }, (_, i) => `w${i}`);
    db.exec('BEGIN');
    for (let i = 0; i < 9000; i++) {
      // Zipf-ish: the first words are in most rows, well past the budget; the last in a few.
      const words = Array.from({ length: 4 + Math.floor(next() * 20) }, () => vocab[Math.floor(vocab.length * next() ** 4)] as string);
      db.run('INSERT INTO memory_fts(terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)', [analyze(words.join(' ')), words.join(' '), i, 'global', `x:${i}`]);
    }
    db.exec('COMMIT');
    const exact = (w: string) => prunedExactly(db, [w]).keptCounts[0] as number;
    expect(exact('w0')).toBeGreaterThan(MATCH_BUDGET);
    expect(exact('w1')).toBeGreaterThan(MATCH_BUDGET);

    const counts = new DocumentCounts();
    // What a common word's count was taken as, before and after a request that needed it exactly.
    expect(counts.of(db, 0, 'memory_fts', ['w0'])).toEqual([OVER_BUDGET]);
    const queries = [['w0', 'w1'], ['w1', 'w0', 'w2'], ['w0'], ['w0', 'w399', 'nothere'], ['nothere'], ['w3', 'w1', 'w0', 'w250', 'w120', 'w30']];
    for (let q = 0; q < 60; q++) queries.push(Array.from({ length: 1 + Math.floor(next() * 10) }, () => vocab[Math.floor(vocab.length * next() ** 2)] as string));
    for (const words of queries) {
      const unique = [...new Set(words)];
      const want = prunedExactly(db, unique);
      for (const cache of [counts, new DocumentCounts()]) {
        const got = prunedWords(db, 0, 'memory_fts', unique, cache);
        expect({ kept: got.kept, keptCounts: got.keptCounts, matches: got.matches }, unique.join(' ')).toEqual(want);
      }
    }
    expect(counts.of(db, 0, 'memory_fts', ['w0'], true)).toEqual([exact('w0')]);
    db.close();
  });
});
