import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../src/core/history/historySchema';
import { parseMatchQuery } from '../../src/core/search/matchQuery';
import { createFtsTableSql, excerptsOf, snippets } from '../../src/core/search/ftsSearch';
import { sqliteIsCheaper } from '../../src/core/search/excerpts';
import { foldToken, snippetOf, phrasesOfMatch } from '../../src/core/search/snippet';
import type { Services } from '../../src/core/services';
import { loadSqlJs, queryRows } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, WASM_PATH } from './helpers/tempStore';

let s: Services;
beforeAll(async () => {
  s = await openTemp();
  await s.importer.importPaths([transcriptFixtures()]);
});
afterAll(() => s.store.close());

/** SQLite's own snippet() over every row the query matches: what the JavaScript excerpts must equal. */
function sqliteSnippets(match: string, tokens: number): Map<number, string> {
  const rows = queryRows(s.store.db, `SELECT docid, snippet(${HISTORY_FTS}, '[', ']', '…', 0, ${tokens}) AS s FROM ${HISTORY_FTS} WHERE ${HISTORY_FTS} MATCH ?`, [match]);
  return new Map(rows.map((r) => [Number(r.docid), String(r.s)]));
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
  it('equal SQLite FTS4 snippet() for every match of queries drawn from real transcripts, at both excerpt lengths and for OR queries', () => {
    const queries = queriesFromCorpus();
    expect(queries.length).toBeGreaterThan(50);
    let compared = 0;
    const differences: string[] = [];
    for (const q of queries) {
      const parsed = parseMatchQuery(q);
      if (!parsed) continue;
      const or = parsed.match.match(/"[^"]*"\*?/g)?.join(' OR ') ?? parsed.match;
      for (const match of new Set([parsed.match, or])) {
        for (const tokens of [16, 24, 7]) {
          const expected = sqliteSnippets(match, tokens);
          const ours = snippets(s.store.db, HISTORY_FTS, match, [...expected.keys()], tokens);
          // From texts already read (search_text's one read per shown row), told the match count.
          const texts = new Map(queryRows(s.store.db, `SELECT docid, body FROM ${HISTORY_FTS} WHERE docid IN (${[...expected.keys()].join(',') || 'NULL'})`).map((r) => [Number(r.docid), String(r.body ?? '')]));
          const hinted = excerptsOf(s.store.db, HISTORY_FTS, match, texts, tokens, expected.size);
          for (const [docid, want] of expected) {
            compared++;
            if ((ours.get(docid) !== want || hinted.get(docid) !== want) && differences.length < 5) differences.push(`${match} (${tokens}) doc ${docid}:\n  sqlite ${JSON.stringify(want)}\n  ours   ${JSON.stringify(ours.get(docid))}`);
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(2000);
    expect(differences, differences.join('\n')).toEqual([]);
  });

  it('on long texts with few matches takes SQLite\'s own pass, and both paths give SQLite\'s excerpts', async () => {
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    try {
      db.run(createFtsTableSql('t'));
      const words = ['alpha', 'Beta', 'gamma', 'délta', 'stack', 'trace', 'return', 'value'];
      const long = Array.from({ length: 6000 }, (_, i) => `${words[(i * 7) % words.length] as string}${i % 11 ? ' ' : '.\n'}`).join('') + ' zebra tail';
      db.run('INSERT INTO t(docid, body) VALUES (?, ?)', [1, long]);
      db.run('INSERT INTO t(docid, body) VALUES (?, ?)', [2, 'a short zebra, and a trace']);
      expect(sqliteIsCheaper(long.length, 2)).toBe(true);
      expect(sqliteIsCheaper(3000, 2)).toBe(false);
      // Several words: SQLite walks each word's whole doclist, which the match count does not tell.
      expect(sqliteIsCheaper(long.length, 2, 2)).toBe(false);
      for (const match of ['"zebra"', '"trace"', '"delta" "zebra"', '"trace stack"', '"gamm*"']) {
        const want = new Map(queryRows(db, `SELECT docid, snippet(t, '[', ']', '…', 0, 16) AS s FROM t WHERE t MATCH ?`, [match]).map((r) => [Number(r.docid), String(r.s)]));
        expect(want.size, match).toBeGreaterThan(0);
        const ids = [...want.keys()];
        expect(snippets(db, 't', match, ids, 16, want.size), `${match}, SQLite's pass`).toEqual(want);
        expect(snippets(db, 't', match, ids, 16), `${match}, JavaScript`).toEqual(want);
      }
    } finally {
      db.close();
    }
  });

  it('fold case and diacritics as unicode61 does, highlight prefixes and phrases, centre the hits and cut with ellipses, as SQLite does', async () => {
    expect(foldToken('Électricité')).toBe('electricite');
    expect(foldToken('ЗАПИСЬ')).toBe('запись');
    const SQL = await loadSqlJs(WASM_PATH);
    const db = new SQL.Database();
    try {
      db.run(createFtsTableSql('t'));
      const greek = 'Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau.';
      const texts = [greek, 'Short: the Config file.', '  Ça marche: Électricité ЗАПИСЬ naïve!  ', 'snake_case_name and kebab-case-name; x.y.z'];
      texts.forEach((t, i) => db.run('INSERT INTO t(docid, body) VALUES (?, ?)', [i + 1, t]));
      const cases: [string, number, string][] = [
        ['"kappa"', 4, '…theta iota [kappa] lambda…'],
        ['"conf*"', 16, 'Short: the [Config] file.'],
        ['"gamma delta"', 64, 'Alpha beta [gamma] [delta] epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau.'],
        // Two phrases too far apart for one fragment: two shorter fragments, one for each.
        ['"beta" "sigma"', 6, 'Alpha [beta] gamma…rho [sigma] tau.'],
        ['"electricite"', 4, '  Ça marche: [Électricité] ЗАПИСЬ…'],
        ['"naive"', 3, '…Électricité ЗАПИСЬ [naïve]!  '],
        ['"case name"', 5, '…[name] and kebab-[case]-[name]…'],
      ];
      for (const [match, tokens, expected] of cases) {
        const sqlite = db.exec(`SELECT snippet(t, '[', ']', '…', 0, ${tokens}) FROM t WHERE t MATCH ?`, [match])[0]?.values[0]?.[0];
        expect(sqlite, `SQLite on ${match}`).toBe(expected);
        const text = texts.find((t) => snippetOf(t, phrasesOfMatch(match), tokens).includes('['));
        expect(text && snippetOf(text, phrasesOfMatch(match), tokens), match).toBe(expected);
      }
    } finally {
      db.close();
    }
  });
});
