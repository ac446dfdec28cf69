import { describe, expect, it } from 'vitest';
import { createFtsTableSql, indexTerms, searchFts } from '../../src/core/search/ftsSearch';
import { anyWordMatch, partialOnly, partialProvablyEmpty, searchWithPartial } from '../../src/core/search/partialMatches';
import { loadSqlJs, type Database } from '../../src/core/store/sqlite';
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
function bothPasses(db: Database, query: string, limit: number) {
  const req = { query, limit, now: 9000 };
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
});
