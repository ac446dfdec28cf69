import { describe, expect, it } from 'vitest';
import { HISTORY_FTS } from '../../src/core/history/historyIndex';
import { searchFts } from '../../src/core/search/ftsSearch';
import { snippets } from '../../src/core/search/excerpts';
import { STORE_MODULES } from '../../src/core/services';
import { migrate } from '../../src/core/store/schema';
import { loadSqlJs, queryRows, type Database } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { ftsIntegrity } from './helpers/ftsIntegrity';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

/**
 * history_fts is FTS4 external content over the events (src/core/history/historyIndex.ts): the
 * index must stay exactly what the events give through every write, and a store written with the
 * index's own content table must migrate to the same rows and answers.
 */

const FIXTURES = transcriptFixtures();
const NOW = 1_800_000_000_000;
const QUERIES = ['error', 'the file', 'bash', 'test', 'kestrels'];

function answers(db: Database) {
  return {
    events: queryRows(db, 'SELECT * FROM events ORDER BY id'),
    index: queryRows(db, `SELECT docid, terms, body, created_at, scope, session_id, kind FROM ${HISTORY_FTS} ORDER BY docid`),
    stat: queryRows(db, `SELECT hex(value) AS v FROM ${HISTORY_FTS}_stat`),
    docsize: queryRows(db, `SELECT docid, hex(size) AS s FROM ${HISTORY_FTS}_docsize ORDER BY docid`),
    searches: QUERIES.map((query) => {
      const found = searchFts(db, HISTORY_FTS, { query, limit: 30, sort: 'hybrid', now: NOW, columns: ['body', 'scope', 'session_id'] });
      return found.ok ? { found, snippets: [...snippets(db, HISTORY_FTS, found.match, found.hits.map((h) => h.docid), 24)] } : found;
    }),
  };
}

/**
 * The layout before external content, made from a store of today's: history_fts with its own
 * content table holding the same values, the events without terms and fallback times nor the
 * later index of embeddable events, and the history schema at the version before the migration.
 */
function toOwnContentLayout(db: Database): void {
  db.exec(`
    CREATE TEMP TABLE old_index AS SELECT docid, terms, body, created_at, scope, session_id, kind FROM ${HISTORY_FTS};
    DROP TABLE ${HISTORY_FTS};
    DROP VIEW history_indexed;
    ALTER TABLE events DROP COLUMN terms;
    ALTER TABLE events DROP COLUMN indexed_at;
    CREATE VIRTUAL TABLE ${HISTORY_FTS} USING fts4(terms, body, created_at, scope, session_id, kind,
      notindexed=body, notindexed=created_at, notindexed=scope, notindexed=session_id, notindexed=kind, tokenize=simple);
    INSERT INTO ${HISTORY_FTS}(docid, terms, body, created_at, scope, session_id, kind) SELECT * FROM old_index ORDER BY docid;
    DROP TABLE old_index;
    DROP INDEX events_embeddable;
    UPDATE meta SET value = '3' WHERE key = 'schema:history';
  `);
}

describe('history_fts over the events (external content)', () => {
  it('stays consistent with the events through an import, a forget and dropped tool outputs, and the check can fail', async () => {
    const s = await openTemp(tempHome('index-content'));
    await s.importer.importPaths([FIXTURES]);
    const db = s.store.db;
    expect(ftsIntegrity(db)).toBe('ok');
    const indexed = () => Number(queryRows(db, `SELECT count(*) AS n FROM ${HISTORY_FTS}_docsize`)[0]?.n);
    const before = indexed();
    const sessionId = String(queryRows(db, 'SELECT session_id FROM events GROUP BY session_id ORDER BY count(*) DESC LIMIT 1')[0]?.session_id);
    const ofSession = Number(queryRows(db, 'SELECT count(*) AS n FROM events WHERE session_id = ? AND terms IS NOT NULL', [sessionId])[0]?.n);
    expect(ofSession).toBeGreaterThan(0);
    expect((await s.forget.forget({ session: sessionId })).ok).toBe(true);
    expect(indexed()).toBe(before - ofSession);
    expect(ftsIntegrity(db)).toBe('ok');
    const outputs = Number(queryRows(db, "SELECT count(*) AS n FROM events WHERE kind = 'tool_result' AND created_at IS NOT NULL AND terms IS NOT NULL")[0]?.n);
    expect(outputs).toBeGreaterThan(0);
    expect((await s.forget.dropToolOutputs(NOW, null)).ok).toBe(true);
    expect(indexed()).toBe(before - ofSession - outputs);
    expect(queryRows(db, "SELECT count(*) AS n FROM events WHERE kind = 'tool_result' AND created_at IS NOT NULL AND (terms IS NOT NULL OR indexed_at IS NOT NULL)")[0]?.n).toBe(0);
    expect(ftsIntegrity(db)).toBe('ok');
    // An event whose terms change behind the index's back is caught.
    db.run("UPDATE events SET terms = terms || ' zzzunindexed' WHERE id = (SELECT min(docid) FROM history_fts_docsize)");
    expect(ftsIntegrity(db)).not.toBe('ok');
    s.store.close();
  }, 60_000);

  it('a store whose index held its own copy of the texts migrates to the rows and answers of one written with external content', async () => {
    const s = await openTemp(tempHome('index-migrate'));
    await s.importer.importPaths([FIXTURES]);
    const expected = answers(s.store.db);
    expect(expected.index.length).toBeGreaterThan(100);
    expect(expected.events.some((e) => e.created_at === null && e.indexed_at !== null)).toBe(true); // fallback times travel too
    const SQL = await loadSqlJs(WASM_PATH);
    s.store.checkpoint(); // ends a write batch a background pass may have open, which export() refuses
    const db = new SQL.Database(s.store.db.export());
    s.store.close();
    toOwnContentLayout(db);
    expect(queryRows(db, "SELECT count(*) AS n FROM sqlite_master WHERE name = 'history_fts_content'")[0]?.n).toBe(1);
    expect(migrate(db, STORE_MODULES)).toBe(2); // external content, then the index of embeddable events
    expect(queryRows(db, "SELECT count(*) AS n FROM sqlite_master WHERE name = 'history_fts_content'")[0]?.n).toBe(0);
    expect(answers(db)).toEqual(expected);
    expect(ftsIntegrity(db)).toBe('ok');
    db.close();
  }, 60_000);
});
