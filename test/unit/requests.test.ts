import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RequestService, askLimitFromEnv } from '../../src/core/requests/requestService';
import type { Services } from '../../src/core/services';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { openTemp, tempHome } from './helpers/tempStore';

type Reply = Record<string, unknown>;
interface Text { author: string; text: string; untrusted: boolean; full_chars?: number }
interface Write { id: string; kind: string; at: string; summary: Text; request_id?: string }
interface OpenRequest { id: string; from: string; request: Text }
interface Request { id: string; from: string; to: string; status: string; request: Text; answer: Text | null; answers: number }

const DAY = 86_400_000;

async function call(s: Services, client: string, name: string, input: unknown): Promise<Reply> {
  const tool = findTool(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return (await invokeTool(tool, input, s, { client })) as Reply;
}

/** A store whose clock the test moves; every write gets a distinct millisecond. */
async function clocked(start = Date.parse('2026-11-20T09:00:00Z')) {
  const clock = { now: start };
  const s = await openTemp(tempHome('requests'), () => clock.now++);
  return { s, clock };
}

const writes = (r: Reply) => r.writes as Write[];
const requestCount = (s: Services) => Number(s.store.db.exec('SELECT count(*) FROM agent_requests')[0]?.values[0]?.[0]);

describe('requests between agents (service level, real store)', () => {
  it('refuses every request tool to a connection with no name, and records nothing', async () => {
    const { s } = await clocked();
    await call(s, 'bob', 'whats_new', {});
    const journal = path.join(s.store.home, 'journal.jsonl');
    for (const unnamed of ['', '   ', 'mcp-client', 'MCP-Client']) {
      const before = fs.statSync(journal).size;
      const replies = [
        await call(s, unnamed, 'whats_new', {}),
        await call(s, unnamed, 'ask_agent', { to: 'bob', request: 'hello' }),
        await call(s, unnamed, 'list_requests', {}),
        await call(s, unnamed, 'answer_request', { id: 'req-x', answer: 'no' }),
        await call(s, unnamed, 'close_request', { id: 'req-x' }),
      ];
      for (const r of replies) expect(r).toMatchObject({ ok: false, reason: expect.stringContaining('this connection has no name') });
      expect(fs.statSync(journal).size).toBe(before);
    }
    expect(requestCount(s)).toBe(0);
    s.store.close();
  });

  it('one asks, the addressee sees it first in whats_new and answers, the asker reads the answer; a third agent can neither answer nor close', async () => {
    const { s } = await clocked();
    // Bob and Carol must have connected before anyone can address them.
    expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'Which port does the dev server use?' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('"bob" has never connected'),
    });
    await call(s, 'bob', 'whats_new', {});
    await call(s, 'carol', 'whats_new', {});
    expect(await call(s, 'alice', 'ask_agent', { to: 'alice', request: 'me?' })).toMatchObject({ ok: false, reason: expect.stringContaining('is this connection') });

    const asked = await call(s, 'alice', 'ask_agent', { to: 'Bob', request: 'Which port does the dev server use?', scope: 'project:web' });
    expect(asked).toMatchObject({ ok: true, from: 'alice', to: 'bob', status: 'open', scope: 'project:web', this_hour: { limit: 30, used: 1, unit: 'requests' } });
    const id = asked.id as string;
    await call(s, 'alice', 'remember', { statement: 'The staging database is read-only on Fridays' });

    const news = await call(s, 'bob', 'whats_new', {});
    expect(news.open_requests).toEqual([
      expect.objectContaining({ id, from: 'alice', request: { author: 'alice', text: 'Which port does the dev server use?', untrusted: true } }),
    ]);
    expect(writes(news).map((w) => [w.kind, w.summary.author, w.summary.untrusted])).toEqual([['note', 'alice', true]]);

    expect(await call(s, 'carol', 'answer_request', { id, answer: 'port 80' })).toMatchObject({ ok: false, reason: expect.stringContaining('only that agent can answer') });
    expect(await call(s, 'carol', 'close_request', { id })).toMatchObject({ ok: false, reason: expect.stringContaining('only they can close') });
    expect(await call(s, 'bob', 'answer_request', { id, answer: 'Port 5173.' })).toMatchObject({ ok: true, replaced_answer_of: null, to: 'alice' });
    const again = await call(s, 'bob', 'answer_request', { id, answer: 'Port 5174 since the upgrade.' });
    expect(again).toMatchObject({ ok: true, replaced_answer_of: expect.any(String) });

    const read = await call(s, 'alice', 'list_requests', { to: 'bob', status: 'answered' });
    const [req] = read.requests as Request[];
    expect(req).toMatchObject({
      id,
      status: 'answered',
      answers: 2,
      request: { author: 'alice', untrusted: false },
      answer: { author: 'bob', text: 'Port 5174 since the upgrade.', untrusted: true },
    });
    // The answer also reaches the asker's whats_new, marked as another agent's text.
    const aliceNews = await call(s, 'alice', 'whats_new', {});
    expect(writes(aliceNews)).toEqual([expect.objectContaining({ kind: 'answer', request_id: id, summary: expect.objectContaining({ author: 'bob', untrusted: true }) })]);

    // Bob has no open requests left: answered is not open.
    expect((await call(s, 'bob', 'list_requests', {})).requests).toEqual([]);
    expect(await call(s, 'alice', 'close_request', { id })).toMatchObject({ ok: true, already_closed: false, closed_by: 'alice' });
    expect(await call(s, 'bob', 'close_request', { id })).toMatchObject({ ok: true, already_closed: true });
    expect(await call(s, 'bob', 'answer_request', { id, answer: 'late' })).toMatchObject({ ok: false, reason: expect.stringContaining('was closed by "alice"') });
    expect(await call(s, 'bob', 'answer_request', { id: 'req-nope', answer: 'x' })).toMatchObject({ ok: false, reason: expect.stringContaining('no request has the id') });
    s.store.close();
  });

  it('the addressee may close too; the closed list shows it', async () => {
    const { s } = await clocked();
    await call(s, 'bob', 'whats_new', {});
    const { id } = await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'ping' });
    expect(await call(s, 'bob', 'close_request', { id })).toMatchObject({ ok: true, closed_by: 'bob' });
    expect(((await call(s, 'alice', 'list_requests', { to: 'bob', status: 'closed' })).requests as Request[]).map((r) => r.id)).toEqual([id]);
    s.store.close();
  });

  it('limits ask_agent to 30 an hour per connection by default, refusing with the measured budget', async () => {
    const { s, clock } = await clocked();
    await call(s, 'bob', 'whats_new', {});
    await call(s, 'carol', 'whats_new', {});
    for (let i = 0; i < 30; i++) expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: `question ${i}` })).toMatchObject({ ok: true });
    const refused = await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'one too many' });
    expect(refused).toMatchObject({ ok: false, budget: { limit: 30, used: 30, unit: 'requests' } });
    expect(refused.reason).toMatch(/next one can be recorded after 2026-11-20T10:00:00/);
    // The limit is per connection, and a sliding hour.
    expect(await call(s, 'carol', 'ask_agent', { to: 'bob', request: 'mine' })).toMatchObject({ ok: true });
    clock.now += 3_600_000;
    expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'an hour later' })).toMatchObject({ ok: true });
    expect(requestCount(s)).toBe(32);
    s.store.close();
  });

  it('the hourly limit is configurable (option or RECOLLECT_ASK_LIMIT)', async () => {
    expect(askLimitFromEnv({ RECOLLECT_ASK_LIMIT: '5' })).toBe(5);
    expect(askLimitFromEnv({ RECOLLECT_ASK_LIMIT: 'lots' })).toBe(30);
    expect(askLimitFromEnv({})).toBe(30);
    const { s } = await clocked();
    const requests = new RequestService(s.store, { askLimitPerHour: 2 });
    await requests.whatsNew({}, 'bob');
    await requests.ask({ to: 'bob', request: 'a' }, 'alice');
    await requests.ask({ to: 'bob', request: 'b' }, 'alice');
    expect(await requests.ask({ to: 'bob', request: 'c' }, 'alice')).toMatchObject({ ok: false, budget: { limit: 2, used: 2, unit: 'requests' } });
    s.store.close();
  });

  it('whats_new: the first call covers 7 days, a plain call moves the mark, since is a peek, include_own adds own writes', async () => {
    const start = Date.parse('2026-11-20T09:00:00Z');
    const { s, clock } = await clocked(start - 8 * DAY);
    await call(s, 'bob', 'remember', { statement: 'eight days old' });
    clock.now = start - 6 * DAY;
    await call(s, 'bob', 'remember', { statement: 'six days old' });
    await call(s, 'alice', 'remember', { statement: 'alice wrote this' });
    await call(s, 'bob', 'save_memory', { subject: 'dev server', predicate: 'port', object: '5173' });
    clock.now = start;

    const first = await call(s, 'alice', 'whats_new', {});
    const window = first.window as { from: string; since: string; until: string };
    expect(window.from).toBe('first_call');
    expect(Date.parse(window.until) - Date.parse(window.since)).toBe(7 * DAY);
    expect(first.mark).toMatchObject({ moved: true });
    expect(writes(first).map((w) => [w.kind, w.summary.text])).toEqual([
      ['fact', 'dev server · port → 5173'],
      ['note', 'six days old'],
    ]);
    expect(writes(first).every((w) => w.summary.untrusted)).toBe(true);

    clock.now += 60_000;
    expect(writes(await call(s, 'alice', 'whats_new', {}))).toEqual([]);
    clock.now += 60_000;
    await call(s, 'bob', 'remember', { statement: 'new since the mark' });
    clock.now += 60_000;

    const peek = await call(s, 'alice', 'whats_new', { since: new Date(start - 10 * DAY).toISOString(), include_own: true });
    expect(peek.mark).toMatchObject({ moved: false });
    expect(writes(peek).map((w) => w.summary.text)).toEqual(['new since the mark', 'dev server · port → 5173', 'alice wrote this', 'six days old', 'eight days old']);
    expect(writes(peek).find((w) => w.summary.author === 'alice')?.summary.untrusted).toBe(false);

    // The peek left the mark: the plain call still reports the write made after it.
    const next = await call(s, 'alice', 'whats_new', {});
    expect(next.window).toMatchObject({ from: 'mark' });
    expect(writes(next).map((w) => w.summary.text)).toEqual(['new since the mark']);
    expect(await call(s, 'alice', 'whats_new', { since: 'last tuesday' })).toMatchObject({ ok: false, reason: expect.stringContaining('not an ISO instant') });
    s.store.close();
  });

  it('whats_new excerpts summaries and requests to 240 characters and says how long the full text is', async () => {
    const { s } = await clocked();
    await call(s, 'alice', 'whats_new', {});
    const long = 'word '.repeat(200).trim();
    await call(s, 'bob', 'remember', { statement: long });
    await call(s, 'bob', 'ask_agent', { to: 'alice', request: long });
    const news = await call(s, 'alice', 'whats_new', {});
    const [write] = writes(news);
    const [open] = news.open_requests as OpenRequest[];
    for (const t of [write!.summary, open!.request]) {
      expect(t.text.length).toBe(240);
      expect(t.text.endsWith('…')).toBe(true);
      expect(t.full_chars).toBe(long.length);
    }
    // list_requests returns it in full.
    expect(((await call(s, 'alice', 'list_requests', {})).requests as Request[])[0]?.request.text).toBe(long);
    s.store.close();
  });

  it('whats_new pages a full reply with a cursor over a fixed window: requests first, nothing lost or repeated', async () => {
    const { s } = await clocked();
    await call(s, 'alice', 'whats_new', {});
    for (let i = 0; i < 30; i++) await call(s, 'bob', 'remember', { statement: `bob note ${i}` });
    const asked = [];
    for (let i = 0; i < 3; i++) asked.push((await call(s, 'bob', 'ask_agent', { to: 'alice', request: `question ${i}` })).id);

    const page1 = await call(s, 'alice', 'whats_new', {});
    expect((page1.open_requests as OpenRequest[]).map((r) => r.id)).toEqual([...asked].reverse());
    expect(writes(page1)).toHaveLength(22);
    expect(typeof page1.cursor).toBe('string');
    await call(s, 'bob', 'remember', { statement: 'written while alice was paging' });

    expect(await call(s, 'carol', 'whats_new', { cursor: page1.cursor })).toMatchObject({ ok: false, reason: expect.stringContaining('another connection') });
    expect(await call(s, 'alice', 'whats_new', { cursor: 'bm9wZQ' })).toMatchObject({ ok: false, reason: expect.stringContaining('not one whats_new returned') });
    expect(await call(s, 'alice', 'whats_new', { cursor: page1.cursor, include_own: true })).toMatchObject({ ok: false, reason: expect.stringContaining('send it alone') });

    const page2 = await call(s, 'alice', 'whats_new', { cursor: page1.cursor });
    expect(page2.open_requests).toEqual([]);
    expect(page2.mark).toMatchObject({ moved: false });
    expect(page2.cursor).toBeUndefined();
    const texts = [...writes(page1), ...writes(page2)].map((w) => w.summary.text);
    expect(texts).toEqual(Array.from({ length: 30 }, (_, i) => `bob note ${29 - i}`));

    const later = await call(s, 'alice', 'whats_new', {});
    expect(writes(later).map((w) => w.summary.text)).toEqual(['written while alice was paging']);
    s.store.close();
  });

  it('a page filled by open requests alone continues with the writes', async () => {
    const { s } = await clocked();
    await call(s, 'alice', 'whats_new', {});
    const requests = new RequestService(s.store, { askLimitPerHour: 100 });
    for (let i = 0; i < 25; i++) await requests.ask({ to: 'alice', request: `q${i}` }, 'bob');
    await call(s, 'bob', 'remember', { statement: 'after the questions' });
    const page1 = await call(s, 'alice', 'whats_new', {});
    expect((page1.open_requests as unknown[]).length).toBe(25);
    expect(writes(page1)).toEqual([]);
    const page2 = await call(s, 'alice', 'whats_new', { cursor: page1.cursor });
    expect(page2.open_requests).toEqual([]);
    expect(writes(page2).map((w) => w.summary.text)).toEqual(['after the questions']);
    expect(page2.cursor).toBeUndefined();
    s.store.close();
  });

  it('list_requests: newest first, at most 20, more_requests and before; to lists both directions; scope restricts', async () => {
    const { s } = await clocked();
    const requests = new RequestService(s.store, { askLimitPerHour: 100 });
    await requests.whatsNew({}, 'bob');
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(((await requests.ask({ to: 'bob', request: `q${i}`, scope: i % 5 === 0 ? 'project:x' : undefined }, 'alice')) as Reply).id as string);
    const back = (await requests.ask({ to: 'alice', request: 'from bob' }, 'bob')) as Reply;

    const first = await call(s, 'bob', 'list_requests', {});
    const firstIds = (first.requests as Request[]).map((r) => r.id);
    expect(firstIds).toEqual(ids.slice(5).reverse());
    expect(first).toMatchObject({ shown: 20, more_requests: 5, next_before: ids[5] });
    const second = await call(s, 'bob', 'list_requests', { before: first.next_before });
    expect((second.requests as Request[]).map((r) => r.id)).toEqual(ids.slice(0, 5).reverse());
    expect(second).toMatchObject({ more_requests: 0 });
    expect(second.next_before).toBeUndefined();

    const between = await call(s, 'alice', 'list_requests', { to: 'bob' });
    expect((between.requests as Request[])[0]?.id).toBe(back.id);
    expect(between.more_requests).toBe(6);
    const scoped = await call(s, 'bob', 'list_requests', { scope: 'project:x' });
    expect((scoped.requests as Request[]).map((r) => r.request.text)).toEqual(['q20', 'q15', 'q10', 'q5', 'q0']);
    expect(await call(s, 'carol', 'list_requests', { before: ids[3] })).toMatchObject({ ok: false, reason: expect.stringContaining('not the id of a request this connection is a party to') });
    expect(await call(s, 'bob', 'list_requests', { to: 'nobody' })).toMatchObject({ ok: false, reason: expect.stringContaining('never connected') });
    s.store.close();
  });

  it('refuses bad request text and scopes without recording anything', async () => {
    const { s } = await clocked();
    await call(s, 'bob', 'whats_new', {});
    expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'x'.repeat(4001) })).toMatchObject({ ok: false, budget: { limit: 4000, used: 4001, unit: 'characters' } });
    expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'bell\u0007' })).toMatchObject({ ok: false, reason: expect.stringContaining('U+0007') });
    expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: 'hi', scope: 'team' })).toMatchObject({ ok: false, reason: expect.stringContaining('scope "team"') });
    expect(await call(s, 'alice', 'ask_agent', { to: 'bob', request: '   ' })).toMatchObject({ ok: false, reason: expect.stringContaining('request is empty') });
    expect(requestCount(s)).toBe(0);
    s.store.close();
  });

  it('records a connection once (name, first and last seen), journals nothing for its later calls, and survives a reopen', async () => {
    const home = tempHome('connections');
    let now = Date.parse('2026-11-20T09:00:00Z');
    const s = await openTemp(home, () => now);
    await s.requests.connections.seen('claude-code');
    const journal = fs.readFileSync(path.join(home, 'journal.jsonl'));
    now += 60_000;
    await s.requests.connections.seen('claude-code');
    now += 11 * 60 * 60_000;
    await s.requests.connections.seen('claude-code');
    await s.requests.connections.seen('mcp-client');
    expect(fs.readFileSync(path.join(home, 'journal.jsonl')).equals(journal)).toBe(true);
    now += 60_000;
    await s.requests.connections.seen('Claude-Code'); // a changed spelling is recorded, so the name shown is the current one
    s.store.close();
    const reopened = await openTemp(home, () => now);
    expect(reopened.requests.connections.list()).toEqual([{ name: 'Claude-Code', first_seen_at: '2026-11-20T09:00:00.000Z', last_seen_at: '2026-11-20T20:02:00.000Z' }]);
    reopened.store.close();
  });
});
