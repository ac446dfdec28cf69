import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionChange, StoredEvent } from '../../src/core/history/historySchema';
import { STORE_MODULES } from '../../src/core/services';
import { parseOperation, type Operation } from '../../src/core/store/journal';
import { migrate } from '../../src/core/store/schema';
import { loadSqlJs, queryRows, type Database } from '../../src/core/store/sqlite';
import { analyze } from '../../src/core/text/analyzer';
import { transcriptFixtures } from './helpers/fixtures';
import { ftsIntegrity } from './helpers/ftsIntegrity';
import { referenceApply } from './helpers/referenceHistoryApplier';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

/**
 * The history applier writes new events and their index entries in a few statements per
 * operation (issue 3, import speed). Whatever it does, the rows must be those of the earlier
 * one-event-at-a-time applier (helpers/referenceHistoryApplier.ts): same ids, same values and
 * storage classes, same runs, same search index.
 */

const FIXTURES = transcriptFixtures();

/** Every history row with its rowid, the index's stored columns with their storage class, and what the index answers. */
function picture(db: Database) {
  const terms = ['the', 'error', 'kestrels', 'words', 'bash', 'file', 'test'];
  return {
    sessions: queryRows(db, 'SELECT rowid AS r, * FROM sessions ORDER BY rowid'),
    runs: queryRows(db, 'SELECT rowid AS r, * FROM runs ORDER BY rowid'),
    events: queryRows(db, 'SELECT * FROM events ORDER BY id'),
    files: queryRows(db, 'SELECT rowid AS r, * FROM import_files ORDER BY rowid'),
    index: queryRows(db, 'SELECT docid, terms, body, created_at, typeof(created_at) AS t, scope, session_id, kind FROM history_fts ORDER BY docid'),
    matches: terms.map((t) => queryRows(db, "SELECT docid, hex(matchinfo(history_fts, 'pcnalx')) AS m FROM history_fts WHERE history_fts MATCH ? ORDER BY docid", [analyze(t)])),
    integrity: ftsIntegrity(db),
  };
}

/** Replays a store's journal into a fresh database, history operations through the reference applier. */
async function referencePicture(home: string) {
  const SQL = await loadSqlJs(WASM_PATH);
  const db = new SQL.Database();
  migrate(db, STORE_MODULES);
  const appliers = new Map(STORE_MODULES.flatMap((m) => Object.entries(m.appliers)));
  let applied = 0;
  let batches = 0;
  for (const line of fs.readFileSync(path.join(home, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const op = parseOperation(line);
    if (typeof op === 'string') throw new Error(op);
    db.exec('SAVEPOINT op');
    // A batch line counts once per file in it, as the one-file lines it stands for would.
    const files = (op as { files?: unknown[] }).files;
    if (op.op === 'history.files.imported') batches++;
    if (referenceApply(db, op)) applied += files?.length ?? 1;
    else appliers.get(op.op)?.(db, op);
    db.exec('RELEASE op');
  }
  const p = picture(db);
  db.close();
  return { picture: p, applied, batches };
}

function event(key: string, seq: number, kind: StoredEvent['kind'], text: string, more: Partial<StoredEvent> = {}): StoredEvent {
  return {
    key, seq, runKey: 'r1', kind, text, blob: null, bytes: Buffer.byteLength(text), hash: `h${seq}:${text.length}`, at: null, toolName: null, callId: null,
    toolInput: null, isError: false, parentKey: null, rawType: null, model: null, ...more,
  };
}

function change(id: string, upserts: StoredEvent[], removedKeys: string[] = [], updatedAt: number | null = null): SessionChange {
  const runIds: Record<string, string> = {};
  for (const e of upserts) runIds[e.runKey] ??= `t_${id}_${e.runKey}`;
  return {
    session: { id, source: 'claude-code', externalId: id, file: `/crafted/${id}.jsonl`, title: null, workspace: null, model: null, startedAt: null, updatedAt, parentId: null },
    upserts, removedKeys, runIds,
  };
}

describe('history applier (new events in a few statements per operation)', () => {
  it('imports of every fixture, a grown file and a rewritten snapshot file leave exactly the rows the per-event applier makes of the same journal', async () => {
    const home = tempHome('apply-real');
    const s = await openTemp(home);
    // A session grows (new keys for a known session), every fixture is imported, and a
    // snapshot-format file loses its first request, which shifts every seq (removed keys and
    // changed events in one operation).
    const dir = tempHome('apply-real-files');
    const jsonl = path.join(dir, 'b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl');
    const lines = fs.readFileSync(path.join(FIXTURES, 'claude-code/project-a/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl'), 'utf8').split('\n').filter(Boolean);
    fs.writeFileSync(jsonl, lines.slice(0, 3).join('\n') + '\n');
    await s.importer.importPaths([jsonl]);
    fs.appendFileSync(jsonl, lines.slice(3).join('\n') + '\n');
    const grown = await s.importer.importPaths([jsonl]);
    expect(grown.events).toBeGreaterThan(0);
    const first = await s.importer.importPaths([FIXTURES]);
    expect(first.events).toBeGreaterThan(100);
    const json = path.join(dir, 'session.json');
    const data = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'copilot-export/dealenx-secretary_canceled_chat.json'), 'utf8')) as { requests: unknown[] };
    fs.writeFileSync(json, JSON.stringify(data));
    await s.importer.importPaths([json]);
    fs.writeFileSync(json, JSON.stringify({ ...data, requests: data.requests.slice(1) }));
    fs.utimesSync(json, new Date(), new Date(Date.now() + 5000));
    const rewritten = await s.importer.importPaths([json]);
    expect(rewritten.events).toBeGreaterThan(0);

    const got = picture(s.store.db);
    const ref = await referencePicture(home);
    expect(ref.applied).toBeGreaterThan(first.files);
    expect(ref.batches).toBeGreaterThan(0); // the fixtures went in as batches of files
    expect(got.events.length).toBe(ref.picture.events.length);
    expect(got).toEqual(ref.picture);
    s.store.close();
  });

  it('crafted operations (a repeated key, changed and removed events, lone surrogates, missing times, empty tool names, numbers of every storage class) apply as the per-event applier does', async () => {
    const home = tempHome('apply-crafted');
    const T = 1_700_000_000_000;
    const long = 'x'.repeat(299) + '😀 then more';
    const ops: Operation[] = [
      {
        op: 'history.file.imported', at: T, file: { path: '/crafted/a.jsonl', size: 10, mtimeMs: T },
        sessions: [
          change('ses_a', [
            event('u1', 1, 'user', 'how do kestrels hover 😀', { at: T }),
            event('a1', 2, 'assistant', '   \n'),
            event('t1', 3, 'tool_call', 'ls -la', { toolName: '', at: 5 }),
            event('t2', 4, 'tool_result', 'total 0 \ud800 lone bash', { toolName: 'bash', at: 1.5 }),
            event('u1', 5, 'user', 'a repeated key: the later one wins', { runKey: 'r2', at: T + 999 }),
            event('k\udc00', 6, 'user', 'a key with a lone surrogate', { runKey: 'r3', at: 2_147_483_648 }),
            event('nb', 7, 'user', '\u00a0', { runKey: 'r3', at: -3 }),
          ]),
          change('ses_b', [
            event('b3', 3, 'assistant', 'seq order differs from list order', { runKey: 'b', at: T + 3 }),
            event('b1', 1, 'user', 'objective with a cut \ud83d surrogate', { runKey: 'b', at: T + 1 }),
            event('b2', 2, 'user', 'second user message', { runKey: 'b', at: T + 2 }),
            event('c1', 1, 'user', long, { runKey: 'c', at: T + 10 }),
            event('c0', 1, 'assistant', 'same seq as c1, listed later', { runKey: 'c' }),
            event('d1', 2, 'tool_call', `${'long input '.repeat(40)}\u0000 nul and 😀`, { runKey: 'c', toolName: 'grep', toolInput: JSON.stringify({ q: 'é😀\u0000'.repeat(100) }) }),
            event('d2', 3, 'tool_result', `${'long output '.repeat(40)} with a lone \udc00 surrogate`, { runKey: 'c', toolInput: `${'x'.repeat(300)}\ud800` }),
          ], [], T + 50),
        ],
      },
      {
        op: 'history.file.imported', at: T + 100, file: { path: '/crafted/a.jsonl', size: 11, mtimeMs: T + 1 },
        sessions: [
          change('ses_a', [
            event('n1', 8, 'user', 'new words after the first import', { runKey: 'r4' }),
            event('a1', 2, 'assistant', 'now it has words', { at: T + 2 }),
            event('n2', 9, 'assistant', 'and another new event', { runKey: 'r4', at: T + 9 }),
          ], ['t1', 'missing-key'], T + 9),
        ],
      },
    ];
    fs.writeFileSync(path.join(home, 'journal.jsonl'), ops.map((o) => JSON.stringify(o)).join('\n') + '\n');
    const s = await openTemp(home);
    expect(s.store.journalProblems).toBe(0);
    const got = picture(s.store.db);
    const ref = await referencePicture(home);
    expect(ref.applied).toBe(2);
    expect(got.events.map((e) => e.key)).toEqual(['u1', 'a1', 't2', 'k\ufffd\ufffd\ufffd', 'nb', 'b3', 'b1', 'b2', 'c1', 'c0', 'd1', 'd2', 'n1', 'n2']);
    expect(got.index.map((r) => r.t)).toContain('real');
    expect(got).toEqual(ref.picture);
    s.store.close();
  });
});
