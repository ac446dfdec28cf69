import { afterEach, describe, expect, it } from 'vitest';
import { corpusCounts, missing } from '../../src/core/memory/semantic/semanticCorpora';
import { openServices, type Services } from '../../src/core/services';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const open: Services[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.store.close();
});

describe('the events semantic recall embeds', () => {
  it('are counted and listed from their own index, with the answers a scan of every event gives', async () => {
    const s = await openServices({ home: tempHome('embeddable-events'), wasmPath: WASM_PATH });
    open.push(s);
    await s.importer.importPaths([transcriptFixtures()]);
    const db = s.store.db;
    const scanned = (sql: string) => queryRows(db, sql.replace('FROM events ev WHERE', 'FROM events ev NOT INDEXED WHERE'));
    const said = Number(scanned("SELECT count(*) AS n FROM events ev WHERE ev.kind IN ('user', 'assistant') AND trim(ev.text) <> ''")[0]?.n);
    expect(said).toBeGreaterThan(20);
    expect(Number(queryScalar(db, 'SELECT count(*) FROM events'))).toBeGreaterThan(said); // tool calls and results are not embedded

    // Nothing embedded yet: every one is missing; then some get a vector, one of them for a text since changed.
    expect(corpusCounts(db, 'history', 'm')).toEqual({ total: said, missing: said });
    const newest = scanned("SELECT ev.id, ev.hash FROM events ev WHERE ev.kind IN ('user', 'assistant') AND trim(ev.text) <> '' ORDER BY ev.id DESC LIMIT 10");
    db.exec('BEGIN');
    newest.forEach((r, i) => db.run("INSERT INTO embeddings(corpus, key, model, text_hash, blob, idx, dims) VALUES ('history', ?, 'm', ?, 'b', ?, 4)", [`event:${r.id}`, i === 3 ? 'stale' : String(r.hash), i]));
    db.exec('COMMIT');
    expect(corpusCounts(db, 'history', 'm')).toEqual({ total: said, missing: said - 9 });
    expect(corpusCounts(db, 'history', 'other model')).toEqual({ total: said, missing: said });
    const todo = missing(db, 'history', 'm', 5).map((t) => t.key);
    expect(todo[0]).toBe(`event:${newest[3]?.id}`);
    expect(todo.slice(1)).toEqual(scanned("SELECT 'event:' || ev.id AS key FROM events ev WHERE ev.kind IN ('user', 'assistant') AND trim(ev.text) <> '' AND ev.id < " + Number(newest[9]?.id) + ' ORDER BY ev.id DESC LIMIT 4').map((r) => r.key));

    // The count is answered from the index, never by reading every event's row (the listing's answers are checked above).
    const plan = (sql: string) => queryRows(db, `EXPLAIN QUERY PLAN ${sql}`, ['m']).map((r) => String(r.detail)).join(' | ');
    const counted = plan("SELECT count(*) FROM events ev WHERE kind IN ('user', 'assistant') AND trim(text) <> '' AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = 'event:' || ev.id AND e.model = ?)");
    expect(counted).toMatch(/SCAN ev USING (COVERING )?INDEX events_embeddable/);
  });
});
