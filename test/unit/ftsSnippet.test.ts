import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../src/core/history/historySchema';
import { parseMatchQuery } from '../../src/core/search/matchQuery';
import { createFtsTableSql, excerptsOf, indexTerms, snippets } from '../../src/core/search/ftsSearch';
import { phrasesOfMatch, snippetOf, termSnippetOf } from '../../src/core/search/snippet';
import type { Services } from '../../src/core/services';
import { loadSqlJs, queryRows } from '../../src/core/store/sqlite';
import { CLOSE, ELLIPSIS, OPEN, originalShape, termShape } from './helpers/excerptCompare';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, WASM_PATH } from './helpers/tempStore';

let s: Services;
beforeAll(async () => {
  s = await openTemp();
  await s.importer.importPaths([transcriptFixtures()]);
});
afterAll(() => s.store.close());

/** SQLite's own snippet() of the terms column over every row the query matches, with each row's terms. */
function sqliteSnippets(match: string, tokens: number): Map<number, { want: string; terms: string }> {
  const rows = queryRows(s.store.db, `SELECT docid, terms, snippet(${HISTORY_FTS}, '${OPEN}', '${CLOSE}', '${ELLIPSIS}', 0, ${tokens}) AS s FROM ${HISTORY_FTS} WHERE ${HISTORY_FTS} MATCH ?`, [match]);
  return new Map(rows.map((r) => [Number(r.docid), { want: String(r.s), terms: String(r.terms) }]));
}

/** Queries drawn from the imported text itself: frequent, middling and rare words, prefixes, adjacent pairs as phrases, two- and three-word queries. */
function queriesFromCorpus(): string[] {
  const counts = new Map<string, number>();
  const pairs: string[] = [];
  for (const r of queryRows(s.store.db, `SELECT body FROM ${HISTORY_FTS} ORDER BY docid`)) {
    const words = String(r.body).match(/[\p{L}\p{N}]+/gu) ?? [];
    words.forEach((w, i) => {
      counts.set(w, (counts.get(w) ?? 0) + 1);
      if (i % 97 === 5 && words[i + 1]) pairs.push(`"${w} ${words[i + 1]}"`);
    });
  }
  const byCount = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  const pick = (from: number, step: number, n: number) => Array.from({ length: n }, (_, i) => byCount[from + i * step]).filter((w): w is string => !!w);
  const common = pick(0, 1, 12);
  const middling = pick(200, 37, 12);
  const rare = pick(Math.floor(byCount.length * 0.8), 53, 8);
  const nonAscii = byCount.filter((w) => /[^\x00-\x7f]/.test(w)).slice(0, 8);
  const prefixes = [...common.slice(0, 4), ...middling.slice(0, 4)].filter((w) => w.length > 4).map((w) => `${w.slice(0, 4)}*`);
  const multi = common.slice(0, 6).map((w, i) => `${w} ${middling[i] ?? ''} ${i % 2 ? (rare[i] ?? '') : ''}`.trim());
  return [...common, ...middling, ...rare, ...nonAscii, ...prefixes, ...pairs.slice(0, 12), ...multi];
}

describe('excerpts computed in JavaScript', () => {
  it('follow SQLite FTS4 snippet() over the indexed terms for every match of queries drawn from real transcripts, at three excerpt lengths and for OR queries, and show the original words', () => {
    const queries = queriesFromCorpus();
    expect(queries.length).toBeGreaterThan(50);
    let compared = 0;
    const differences: string[] = [];
    for (const q of queries) {
      const parsed = parseMatchQuery(q);
      if (!parsed) continue;
      for (const match of new Set([parsed.match, parsed.anyMatch])) {
        const phrases = phrasesOfMatch(match);
        for (const tokens of [16, 24, 7]) {
          const expected = sqliteSnippets(match, tokens);
          const ids = [...expected.keys()];
          const ours = snippets(s.store.db, HISTORY_FTS, match, ids, tokens);
          // From texts already read (search_text's one read per shown row).
          const texts = new Map(queryRows(s.store.db, `SELECT docid, body FROM ${HISTORY_FTS} WHERE docid IN (${ids.join(',') || 'NULL'})`).map((r) => [Number(r.docid), String(r.body ?? '')]));
          const marked = new Map([...texts].map(([id, t]) => [id, snippetOf(t, phrases, tokens, OPEN, CLOSE, ELLIPSIS)]));
          const fromTexts = excerptsOf(match, texts, tokens);
          for (const [docid, { want, terms }] of expected) {
            compared++;
            const rules = termSnippetOf(terms, phrases, tokens, OPEN, CLOSE, ELLIPSIS);
            const same = rules === want && JSON.stringify(originalShape(marked.get(docid) ?? '')) === JSON.stringify(termShape(want)) && ours.get(docid) === fromTexts.get(docid);
            if (!same && differences.length < 5) differences.push(`${match} (${tokens}) doc ${docid}:\n  sqlite ${JSON.stringify(want)}\n  rules  ${JSON.stringify(rules)}\n  ours   ${JSON.stringify(marked.get(docid))}`);
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(2000);
    expect(differences, differences.join('\n')).toEqual([]);
  });

  it('highlight the original words: stemmed forms, folded letters, prefixes, phrases, and CJK words inside a sentence as one mark', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    try {
      db.run(createFtsTableSql('t'));
      const greek = 'Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau.';
      const texts = [
        greek,
        'Short: the Config file.',
        '  Ça marche: Électricité ЗАПИСЬ naïve!  ',
        'snake_case_name and kebab-case-name; x.y.z',
        'Ask before adding new dependencies to package.json.',
        '髪の毛が長いおじさんは、暇つぶしに最新のゲームをしていた。',
        '我们今天讨论了数据库索引的性能问题。',
      ];
      texts.forEach((t, i) => db.run('INSERT INTO t(docid, terms, body) VALUES (?, ?, ?)', [i + 1, indexTerms(t), t]));
      const cases: [string, number, string][] = [
        ['kappa', 4, '…theta iota [kappa] lambda…'],
        ['conf*', 16, 'Short: the [Config] file.'],
        ['"gamma delta"', 64, 'Alpha beta [gamma] [delta] epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau.'],
        // Two phrases too far apart for one fragment: two shorter fragments, one for each.
        ['beta sigma', 6, 'Alpha [beta] gamma…rho [sigma] tau.'],
        ['electricite', 4, '  Ça marche: [Électricité] ЗАПИСЬ…'],
        ['naive', 3, '…Électricité ЗАПИСЬ [naïve]!  '],
        ['"case name"', 5, '…[name] and kebab-[case]-[name]…'],
        ['new dependency', 16, 'Ask before adding [new] [dependencies] to package.json.'],
        ['おじさん', 6, '…長い[おじさん]は…'],
        ['髪の毛 最新', 64, '[髪の毛]が長いおじさんは、暇つぶしに[最新]のゲームをしていた。'],
        ['数据库', 5, '…论了[数据库]索…'],
      ];
      for (const [query, tokens, expected] of cases) {
        const match = parseMatchQuery(query)?.match as string;
        const row = db.exec('SELECT body FROM t WHERE t MATCH ?', [match])[0]?.values[0]?.[0];
        expect(row, `the index finds ${query}`).toBeDefined();
        expect(snippetOf(String(row), phrasesOfMatch(match), tokens), query).toBe(expected);
      }
    } finally {
      db.close();
    }
  });
});
