import { describe, expect, it } from 'vitest';
import { createFtsTableSql, indexTerms, searchFts } from '../../src/core/search/ftsSearch';
import { anyWordMatch, partialFirst, partialOnly, partialProvablyEmpty, searchWithPartial } from '../../src/core/search/partialMatches';
import { loadSqlJs, type Database } from '../../src/core/store/sqlite';
import { parseMatchQuery } from '../../src/core/search/matchQuery';
import { WASM_PATH } from './helpers/tempStore';

async function ftsDb(texts: readonly string[]): Promise<Database> {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database();
  db.exec(createFtsTableSql('t'));
  texts.forEach((text, i) => db.run('INSERT INTO t(docid, terms, body, created_at, scope) VALUES (?, ?, ?, ?, ?)', [i + 1, indexTerms(text), text, 1000 + i, 's']));
  return db;
}

const FILLER = ['the deploy script runs on staging', 'what did the linter say about imports', 'lunch order for friday'];

/** What searchWithPartial answered before it knew when to skip the any-word pass: both passes, always. */
function bothPasses(db: Database, query: string, limit: number, scope?: string) {
  const req = { query, limit, now: 9000, ...(scope ? { scope } : {}) };
  const strict = searchFts(db, 't', req);
  if (!strict.ok) throw new Error(strict.reason);
  const anyWord = anyWordMatch(db, 't', query);
  if (!anyWord) throw new Error('one phrase');
  const partial = searchFts(db, 't', { ...req, match: anyWord.match, anyPhrase: true });
  if (!partial.ok) throw new Error(partial.reason);
  const rest = partialOnly(partial.hits, strict.hits, limit - strict.hits.length);
  return {
    hits: [...strict.hits.map((h) => ({ ...h, matched: 'all' })), ...rest.map((h) => ({ ...h, matched: 'partial' }))],
    total: strict.total,
    partialTotal: partial.total - strict.total,
    anyWord,
  };
}

describe('partial fill', () => {
  it('skips the any-word pass when every row holding a kept word holds every word, with the same answer', async () => {
    const db = await ftsDb([...FILLER, 'what is the kubelet doing', 'what broke the kubelet again']);
    const query = 'what kubelet';
    const both = bothPasses(db, query, 10);
    // "what" is a function word: only "kubelet" is searched for partial matches, and both its rows hold "what".
    expect(partialProvablyEmpty(both.anyWord, both.total)).toBe(true);
    const filled = searchWithPartial(db, 't', { query, limit: 10, now: 9000 });
    expect(filled.ok).toBe(true);
    if (!filled.ok) return;
    expect(filled.hits).toEqual(both.hits);
    expect(filled.total).toBe(2);
    expect(filled.partialTotal).toBe(both.partialTotal);
    expect(filled.partialMatch).toBe(both.anyWord.match);
    db.close();
  });

  it('still fills with partial matches when a kept word occurs without the others', async () => {
    const db = await ftsDb([...FILLER, 'what is the kubelet doing', 'kubelet restarts on its own']);
    const query = 'what kubelet';
    const both = bothPasses(db, query, 10);
    expect(partialProvablyEmpty(both.anyWord, both.total)).toBe(false);
    const filled = searchWithPartial(db, 't', { query, limit: 10, now: 9000 });
    expect(filled.ok && filled.hits).toEqual(both.hits);
    expect(filled.ok && filled.hits.map((h) => [h.docid, h.matched])).toEqual([[4, 'all'], [5, 'partial']]);
    expect(filled.ok && filled.partialTotal).toBe(1);
    db.close();
  });

  it('hands the any-word pass each kept word\'s document count, and answers as when the pass gathers them itself', async () => {
    const texts = [...FILLER, 'kubelet restarts on staging', 'staging kubelet logs', 'the kubelet again', 'staging is down', 'deploy the kubelet to staging', 'linter staging imports'];
    const db = await ftsDb(texts);
    const query = 'kubelet staging linter';
    const anyWord = anyWordMatch(db, 't', query);
    expect(anyWord?.match).toBe('"linter" OR "kubelet" OR "stag"');
    // The counts are each word's documents, in the expression's order.
    expect(anyWord?.counts).toEqual([2, 4, 6]);
    for (const limit of [1, 3, 10]) {
      const filled = searchWithPartial(db, 't', { query, limit, now: 9000 });
      const both = bothPasses(db, query, limit);
      expect(filled.ok && filled.hits, `limit ${limit}`).toEqual(both.hits);
      expect(filled.ok && filled.partialTotal).toBe(both.partialTotal);
    }
    const filled = searchWithPartial(db, 't', { query, limit: 10, now: 9000 });
    expect(filled.ok && filled.hits.filter((h) => h.matched === 'partial').length).toBe(8);
    db.close();
  });

  it('runs the any-word pass first when it must run anyway, and skips the every-word pass when no row holds every kept word, with the same answer', async () => {
    const texts = [...FILLER, 'kubelet restarts on staging', 'staging kubelet logs', 'the kubelet again', 'staging is down', 'the deploy of the kubelet to staging', 'linter staging imports', 'what did the linter do'];
    for (let i = 0; i < 30; i++) texts.push(`staging run ${i} of the deploy script`);
    const db = await ftsDb(texts);
    const version = 7;
    // skip: the every-word pass is not run; reuse: it runs, and the any-word pass run first serves; none: both as usual.
    const cases: { query: string; limit: number; first: 'skip' | 'reuse' | 'none' }[] = [
      // "linter" (3 rows) never occurs with "kubelet": no every-word row, so the every-word pass is skipped.
      { query: 'kubelet linter', limit: 10, first: 'skip' },
      { query: 'what kubelet linter', limit: 5, first: 'skip' },
      { query: 'linter kubelet staging', limit: 4, first: 'skip' },
      // Rows hold both: the every-word pass runs as well.
      { query: 'kubelet staging', limit: 5, first: 'reuse' },
      { query: 'linter imports', limit: 10, first: 'reuse' },
      // The rarest kept word is in as many rows as the limit or more: the every-word pass alone may fill the list.
      { query: 'kubelet linter', limit: 3, first: 'none' },
      // One kept word ("what" is a function word), a prefix, words no row holds: never.
      { query: 'what linter', limit: 10, first: 'none' },
      { query: 'kube* linter', limit: 10, first: 'none' },
      { query: 'zebra quokka', limit: 10, first: 'none' },
    ];
    for (const { query, limit, first } of cases)
      for (const columns of [undefined, ['body', 'scope']])
        for (const scope of [undefined, 's', 'elsewhere']) {
        const req = { query, limit, now: 9000, ...(columns ? { columns } : {}), ...(scope ? { scope } : {}) };
        // The first call counts the words; the counts are then held for this version.
        const filled = searchWithPartial(db, 't', req, version);
        const ran = partialFirst(db, 't', req, version);
        // Rows of another scope only: the any-word pass finds none, so neither can the every-word one.
        expect(ran === undefined ? 'none' : 'outcome' in ran ? 'skip' : 'reuse', `${query} ${limit} ${scope}`).toBe(scope === 'elsewhere' && first === 'reuse' ? 'skip' : first);
        expect(partialFirst(db, 't', req, version + 1), 'counts not held for another version').toBeUndefined();
        const again = searchWithPartial(db, 't', req, version);
        const both = bothPasses(db, query, limit, scope);
        for (const got of [filled, again]) {
          if (!got.ok) throw new Error(got.reason);
          expect(got.hits, `${query} ${limit}`).toEqual(both.hits);
          expect(got.total).toBe(both.total);
          expect(got.partialTotal).toBe(both.partialTotal);
          expect(got.match).toBe(parseMatch(query));
          expect(got.partialMatch).toBe(both.anyWord.match);
          if (columns) expect([...(got.rows?.keys() ?? [])].sort()).toEqual(got.hits.map((h) => h.docid).sort());
          if (columns) for (const h of got.hits) expect(got.rows?.get(h.docid)?.body).toBe(texts[h.docid - 1]);
        }
      }
    // One phrase, whose partial matches are its matches: never.
    searchWithPartial(db, 't', { query: 'kubelet', limit: 10, now: 9000 }, version);
    expect(partialFirst(db, 't', { query: 'kubelet', limit: 10, now: 9000 }, version)).toBeUndefined();
    db.close();
  });
});

function parseMatch(query: string): string | undefined {
  return parseMatchQuery(query)?.match;
}
