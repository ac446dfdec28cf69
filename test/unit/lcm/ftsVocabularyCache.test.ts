import { describe, expect, it } from 'vitest';
import { FtsVocabulary, type TermTest } from '../../../src/core/lcm/ftsVocabulary';
import { loadSqlJs, queryRows, type Database } from '../../../src/core/store/sqlite';
import { WASM_PATH } from '../helpers/tempStore';

/** Two FTS4 indexes, as lcm_grep has (messages and summaries), each with segments large enough to have leaf blocks. */
async function twoIndexes(): Promise<Database> {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database();
  for (const table of ['msgs', 'sums']) {
    db.exec(`CREATE VIRTUAL TABLE ${table} USING fts4(body, tokenize=unicode61)`);
    db.exec('BEGIN');
    for (let i = 0; i < 3000; i++) {
      const body = i % 600 === 0 ? `calling get${table}Ollama${i}Model now` : `filler${i} word${i * 7} ${table}${i % 97} plain text`;
      db.run(`INSERT INTO ${table}(body) VALUES (?)`, [body]);
    }
    db.exec('COMMIT');
  }
  return db;
}

/** The statements a call prepares, by watching the connection's prepare. */
function watchStatements(db: Database): string[] {
  const seen: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = (sql, params) => {
    seen.push(sql);
    return prepare(sql, params);
  };
  return seen;
}

describe('the FTS vocabulary cache', () => {
  it('keeps each index’s terms: a search of the other index does not make the next one read every leaf again', async () => {
    const db = await twoIndexes();
    try {
      // Leaf blocks exist (a root that is not itself a leaf), so a cache miss has leaves to read.
      const roots = queryRows(db, "SELECT root FROM msgs_segdir UNION ALL SELECT root FROM sums_segdir").map((r) => r.root as Uint8Array);
      expect(roots.length).toBe(2);
      expect(roots.every((root) => root[0] !== 0)).toBe(true);
      const test: TermTest = { kind: 'contains', part: 'ollama' }; // what termTest proves of a literal inside words kept whole
      const vocabulary = new FtsVocabulary();
      const first = vocabulary.matchingTerms(db, 'msgs', test);
      expect(first).toBe('"getmsgsollama0model" OR "getmsgsollama1200model" OR "getmsgsollama1800model" OR "getmsgsollama2400model" OR "getmsgsollama600model"');
      expect(vocabulary.matchingTerms(db, 'sums', test)).toContain('"getsumsollama0model"');

      const seen = watchStatements(db);
      expect(vocabulary.matchingTerms(db, 'msgs', test)).toBe(first);
      expect(seen.filter((sql) => sql.includes('_segments')), 'leaf reads on the second search of msgs').toEqual([]);
      expect(vocabulary.matchingTerms(db, 'sums', test)).toContain('"getsumsollama0model"');
      expect(seen.filter((sql) => sql.includes('_segments'))).toEqual([]);

      // A new segment is read (and only it), and the answer stays that of a fresh reader.
      db.run('INSERT INTO msgs(body) VALUES (?)', ['later getMsgsOllamaLateModel']);
      seen.length = 0;
      const later = vocabulary.matchingTerms(db, 'msgs', test);
      expect(seen.filter((sql) => sql.includes('_segments'))).toEqual([]); // the new segment is all in its root
      expect(later).toContain('"getmsgsollamalatemodel"');
      expect(later).toBe(new FtsVocabulary().matchingTerms(db, 'msgs', test));
    } finally {
      db.close();
    }
  });
});
