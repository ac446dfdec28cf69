import * as fs from 'node:fs';
import * as path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SessionBrowse } from '../../src/core/history/sessionBrowse';
import { openServices, type Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { SMALL_DAG } from './lcm/lcmFixture';
import { transcriptFixtures } from './helpers/fixtures';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const FIXTURES = transcriptFixtures();

function open(home: string): Promise<Services> {
  // sealBytes 1: every checkpointed prefix can be sealed, so the purge meets segments and a live tail.
  return openServices({ home, wasmPath: WASM_PATH, sealBytes: 1, sealDelayMs: 3_600_000, autoCompact: false }, { lcm: SMALL_DAG });
}

/** A tool's answer, without a line in Recollect's activity log (a person's view of calls, outside the store). */
async function tool(s: Services, name: string, input: object, ctx: { client: string; workspace?: string } = { client: 'claude-code' }) {
  const t = findTool(name)!;
  return (await t.run(t.input.parse(input), s, ctx)) as Record<string, unknown>;
}

function rows(s: Services, sql: string, params: (string | number)[] = []) {
  return queryRows(s.store.db, sql, params);
}

/** A word of the target session found in no other session's events or summaries: what a search for "it" must stop finding. */
function distinctiveWord(s: Services, sessionId: string): string {
  const text = rows(s, "SELECT group_concat(text, ' ') AS t FROM events WHERE session_id = ?", [sessionId])[0]!.t as string;
  const others = (rows(s, "SELECT group_concat(text, ' ') AS t FROM events WHERE session_id != ?", [sessionId])[0]!.t as string) +
    (rows(s, "SELECT group_concat(content, ' ') AS t FROM lcm_summaries WHERE session_id != ?", [sessionId])[0]!.t as string);
  const lowerOthers = others.toLowerCase();
  const summaries = (rows(s, "SELECT group_concat(content, ' ') AS t FROM lcm_summaries WHERE session_id = ?", [sessionId])[0]!.t as string).toLowerCase();
  const candidates = [...new Set(text.match(/\b[a-z]{9,}\b/gi) ?? [])];
  const word = candidates.find((w) => !lowerOthers.includes(w.toLowerCase()) && summaries.includes(w.toLowerCase()));
  if (!word) throw new Error('the fixture session has no word of its own in its summaries');
  return word;
}

/** Every byte Recollect keeps of the journal, the sealed segments decompressed. */
function journalBytes(home: string): Buffer {
  const parts = [fs.readFileSync(path.join(home, 'journal.jsonl'))];
  const sealed = path.join(home, 'journal.sealed');
  for (const f of fs.existsSync(sealed) ? fs.readdirSync(sealed) : []) if (f.endsWith('.br')) parts.push(brotliDecompressSync(fs.readFileSync(path.join(sealed, f))));
  return Buffer.concat(parts);
}

/** Whether `word` can be found through any reading surface of the store. */
async function surfacesFinding(s: Services, word: string, ids: { sessionId: string; client: string; taskIds: string[]; summaryIds: string[]; workspace: string }) {
  const found: string[] = [];
  const search = await tool(s, 'chat_history', { mode: 'search', query: word, time_range: 'all' });
  if (JSON.stringify(search).includes(word)) found.push('chat_history search');
  const list = await tool(s, 'chat_history', { mode: 'list', time_range: 'all' }, { client: ids.client, workspace: ids.workspace });
  if (ids.taskIds.some((t) => JSON.stringify(list).includes(t))) found.push('chat_history list');
  const read = await tool(s, 'chat_history', { mode: 'read', task_id: ids.taskIds[0]! });
  if (JSON.stringify(read).includes(word) || read.ok !== false) found.push('chat_history read');
  for (const mode of ['regex', 'full_text'] as const) {
    const grep = await tool(s, 'lcm_grep', { pattern: word, mode, allConversations: true });
    if (JSON.stringify(grep).includes(word)) found.push(`lcm_grep ${mode}`);
  }
  for (const id of ids.summaryIds.slice(0, 3)) {
    const described = await tool(s, 'lcm_describe', { id, allConversations: true });
    if (described.ok !== false) found.push(`lcm_describe ${id}`);
  }
  const chapters = await tool(s, 'chapters_search', { query: word });
  if (JSON.stringify(chapters).includes(word)) found.push('chapters_search');
  const browse = new SessionBrowse(s.store);
  if (browse.list({ limit: 1000 }).sessions.some((x) => x.id === ids.sessionId) || browse.rows(ids.sessionId, 200).length) found.push('session history view');
  return found;
}

describe('forgetting an imported session', () => {
  it('leaves nothing of it in any surface, any process, the snapshot, the journal or the blobs; a re-import does not bring it back', async () => {
    const home = tempHome('forget');
    const copy = tempHome('forget-src');
    fs.cpSync(FIXTURES, copy, { recursive: true });
    const a = await open(home);
    await a.importer.importPaths([copy]);
    // The imports go into sealed segments; the summaries stay in the live journal.
    a.store.checkpoint();
    expect(await a.store.sealJournal()).toBeDefined();
    await a.lcm.buildAll();

    // The session with the most large (blob) texts among those with summaries that chat_history takes for "this session" of their kind and workspace.
    const session = rows(
      a,
      `SELECT s.id, s.workspace, s.file, s.source FROM sessions s JOIN events e ON e.session_id = s.id AND e.blob IS NOT NULL
       WHERE s.workspace IS NOT NULL AND s.source IN ('claude-code', 'codex') AND EXISTS (SELECT 1 FROM lcm_summaries x WHERE x.session_id = s.id)
         AND NOT EXISTS (SELECT 1 FROM sessions o WHERE o.source = s.source AND o.workspace = s.workspace AND o.updated_at > s.updated_at)
       GROUP BY s.id ORDER BY count(*) DESC LIMIT 1`,
    )[0]!;
    const file = String(session.file);
    const sessionId = String(session.id);
    const ids = {
      sessionId,
      client: String(session.source),
      workspace: String(session.workspace),
      taskIds: rows(a, 'SELECT id FROM runs WHERE session_id = ? ORDER BY seq', [sessionId]).map((r) => String(r.id)),
      summaryIds: rows(a, 'SELECT id FROM lcm_summaries WHERE session_id = ? ORDER BY depth DESC', [sessionId]).map((r) => String(r.id)),
    };
    const word = distinctiveWord(a, sessionId);
    // Chapters archived from it (a continue): verbatim Markdown blobs and their index entries.
    const seg = await tool(a, 'chapters_segment', { sessionId });
    const ranges = (seg.ranges as { startSeq: number; endSeq: number; title: string; summary: string }[]).map(({ startSeq, endSeq, title, summary }) => ({ startSeq, endSeq, title, summary }));
    const continued = await tool(a, 'chapters_continue', { sessionId, chapters: ranges, handoffNote: 'carry on' });
    expect(continued.ok).toBe(true);
    const chapterBlobs = (continued.chapters as { sha256: string }[]).map((c) => c.sha256);
    expect(chapterBlobs.length).toBeGreaterThan(0);
    const archiveBlobs = rows(a, 'SELECT sha256 AS h FROM chapter_plans UNION SELECT first_message_sha FROM child_sessions WHERE first_message_sha IS NOT NULL').map((r) => String(r.h));
    const blobs = rows(a, 'SELECT DISTINCT blob FROM events WHERE session_id = ? AND blob IS NOT NULL', [sessionId]).map((r) => String(r.blob));
    const shared = new Set(rows(a, 'SELECT DISTINCT blob FROM events WHERE session_id != ? AND blob IS NOT NULL', [sessionId]).map((r) => String(r.blob)));
    expect(blobs.length).toBeGreaterThan(0);
    expect(ids.summaryIds.length).toBeGreaterThan(0);
    const otherSessions = Number(rows(a, 'SELECT count(*) AS n FROM sessions WHERE id != ?', [sessionId])[0]!.n);
    const otherEvents = Number(rows(a, 'SELECT count(*) AS n FROM events WHERE session_id != ?', [sessionId])[0]!.n);

    // A second process on the same store, caught up before the forget: it sees the session, then must stop seeing it.
    const b = await open(home);
    expect(await surfacesFinding(b, word, ids)).toContain('chat_history search');
    expect(await surfacesFinding(a, word, ids)).toEqual(expect.arrayContaining(['chat_history search', 'chat_history list', 'chat_history read', 'lcm_grep regex', 'lcm_grep full_text', 'session history view']));
    expect(journalBytes(home).includes(word)).toBe(true);

    // A call through the ordinary path leaves an activity row, which quotes the session's ids.
    await invokeTool(findTool('chat_history')!, { mode: 'search', query: word, time_range: 'all' }, a, { client: 'claude-code' });
    const naming = () => a.activity.recent(1000).rows.filter((r) => [sessionId, ...ids.taskIds].some((t) => r.result.includes(t) || r.input.includes(t)));
    expect(naming().length).toBeGreaterThan(0);

    const report = await a.forget.forget({ session: sessionId });
    expect(report).toMatchObject({ ok: true, sessions: [expect.objectContaining({ id: sessionId })], snapshot_rewritten: true, warnings: [] });
    if (!report.ok) throw new Error(report.reason);
    expect(report.journal.segment_lines).toBeGreaterThan(0);
    expect(report.journal.live_lines).toBeGreaterThan(0);
    expect(report.blobs_deleted).toBe(new Set([...blobs.filter((h) => !shared.has(h)), ...chapterBlobs, ...archiveBlobs]).size);
    expect(report.activity_rows).toBeGreaterThan(0);
    expect(naming()).toEqual([]);

    expect(await surfacesFinding(a, word, ids)).toEqual([]);
    expect(await surfacesFinding(b, word, ids)).toEqual([]);
    // Everything else stays.
    expect(Number(rows(b, 'SELECT count(*) AS n FROM sessions')[0]!.n)).toBe(otherSessions);
    expect(Number(rows(b, 'SELECT count(*) AS n FROM events')[0]!.n)).toBe(otherEvents);
    // Not on disk: blob files, journal (live and sealed), and the pages of the database (free pages included).
    for (const h of blobs) expect(a.store.blobs.has(h)).toBe(shared.has(h));
    for (const h of [...chapterBlobs, ...archiveBlobs]) expect(a.store.blobs.has(h)).toBe(false);
    expect(rows(b, 'SELECT count(*) AS n FROM chapters')[0]!.n).toBe(0);
    expect(rows(b, 'SELECT count(*) AS n FROM child_sessions')[0]!.n).toBe(0);
    expect(journalBytes(home).includes(word)).toBe(false);
    b.store.checkpoint(); // ends b's open write batch, which export() refuses
    expect(Buffer.from(b.store.db.export()).includes(word)).toBe(false);

    // The watcher's re-import of the same, unchanged and then touched file brings nothing back.
    const again = await a.importer.importPaths([copy]);
    expect(again.forgotten_sessions).toBe(1);
    fs.utimesSync(file, new Date(), new Date(Date.now() + 10_000));
    const touched = await b.importer.importPaths([file]);
    expect(touched).toMatchObject({ forgotten_sessions: 1, events: 0 });
    for (const h of blobs) expect(a.store.blobs.has(h)).toBe(shared.has(h));
    await a.lcm.buildAll();
    expect(await surfacesFinding(a, word, ids)).toEqual([]);
    a.store.close();
    b.store.close();

    // Reopened from the snapshot, and rebuilt from the journal alone: nothing of it either.
    const fromSnapshot = await open(home);
    expect(await surfacesFinding(fromSnapshot, word, ids)).toEqual([]);
    expect(Number(rows(fromSnapshot, 'SELECT count(*) AS n FROM events')[0]!.n)).toBe(otherEvents);
    fromSnapshot.store.close();
    fs.rmSync(path.join(home, 'store.sqlite'));
    const fromJournal = await open(home);
    expect(fromJournal.store.journalProblems).toBe(0);
    expect(await surfacesFinding(fromJournal, word, ids)).toEqual([]);
    expect(Number(rows(fromJournal, 'SELECT count(*) AS n FROM events')[0]!.n)).toBe(otherEvents);
    expect(Number(rows(fromJournal, 'SELECT count(*) AS n FROM forgotten_sessions')[0]!.n)).toBe(1);

    // Only when the person asks does it come back.
    expect(await fromJournal.forget.remember([sessionId])).toEqual({ ok: true, remembered: [sessionId] });
    const back = await fromJournal.importer.importPaths([copy]);
    expect(back.forgotten_sessions).toBe(0);
    expect(rows(fromJournal, 'SELECT count(*) AS n FROM events WHERE session_id = ?', [sessionId])[0]!.n).toBeGreaterThan(0);
    fromJournal.store.close();
  }, 120_000);

  it('forgets a workspace and everything last active before a date; refuses what matches nothing', async () => {
    const home = tempHome('forget-scope');
    const s = await open(home);
    await s.importer.importPaths([FIXTURES]);
    const workspace = String(rows(s, "SELECT workspace FROM sessions WHERE workspace IS NOT NULL AND source = 'claude-code' LIMIT 1")[0]!.workspace);
    const inWorkspace = rows(s, 'SELECT id FROM sessions WHERE workspace = ? OR workspace LIKE ?', [workspace, `${workspace}/%`]).map((r) => String(r.id));
    const shown = s.browse.browseVersion();
    const byWorkspace = await s.forget.forget({ workspace: workspace + '/' });
    expect(s.browse.browseVersion()).not.toBe(shown); // the memory browser redraws
    expect(byWorkspace.ok && byWorkspace.sessions.map((x) => x.id).sort()).toEqual(inWorkspace.sort());
    expect(rows(s, 'SELECT count(*) AS n FROM sessions WHERE workspace = ?', [workspace])[0]!.n).toBe(0);

    const times = rows(s, 'SELECT coalesce(updated_at, started_at) AS t FROM sessions WHERE coalesce(updated_at, started_at) IS NOT NULL ORDER BY t').map((r) => Number(r.t));
    const cut = times[Math.floor(times.length / 2)]!;
    const older = Number(rows(s, 'SELECT count(*) AS n FROM sessions WHERE coalesce(updated_at, started_at) < ?', [cut])[0]!.n);
    const before = await s.forget.forget({ before: cut });
    expect(before.ok && before.sessions.length).toBe(older);
    expect(rows(s, 'SELECT count(*) AS n FROM sessions WHERE coalesce(updated_at, started_at) < ?', [cut])[0]!.n).toBe(0);
    expect(Number(rows(s, 'SELECT count(*) AS n FROM sessions')[0]!.n)).toBeGreaterThan(0);

    expect(await s.forget.forget({ session: 'ses_nosuchsession00' })).toMatchObject({ ok: false, reason: expect.stringContaining('nothing was forgotten') });
    expect(await s.forget.forget({ workspace: '/no/such/folder' })).toMatchObject({ ok: false });
    s.store.close();
  }, 60_000);
});
