import { z } from 'zod';
import { scopeProblem } from '../memory/scope';
import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { Conditions, queryRows, queryScalar, type Database, type SqlValue } from '../store/sqlite';
import { iso, parseInstant } from '../text/time';
import { agentText, EXCERPT_CHARS, UNTRUSTED_NOTICE, type AgentText } from './agentText';
import { connectionKey } from './connectionName';
import { readFeed } from './writeFeed';
import type { MarkMoved } from './requestsSchema';

/** Items in one reply (open requests first, then writes); a fuller window is paged with a cursor. */
export const WHATS_NEW_PAGE = 25;
/** How far back a connection's first whats_new looks. */
export const FIRST_CALL_WINDOW_MS = 7 * 86_400_000;

export interface WhatsNewInput {
  since?: string | undefined;
  scope?: string | undefined;
  include_own?: boolean | undefined;
  cursor?: string | undefined;
}

/** Everything a follow-up page needs; the cursor is this, as base64url JSON. */
const CursorState = z.strictObject({
  v: z.literal(1),
  k: z.string(),
  s: z.number().int(),
  u: z.number().int(),
  f: z.enum(['mark', 'first_call', 'since']),
  sc: z.string().nullable(),
  o: z.boolean(),
  p: z.enum(['r', 'w']),
  a: z.number().int().optional(),
  i: z.string().optional(),
});
type CursorState = z.infer<typeof CursorState>;

export interface OpenRequestItem {
  id: string;
  from: string;
  scope: string;
  asked_at: string;
  request: AgentText;
}

export interface WriteItem {
  id: string;
  kind: 'fact' | 'note' | 'answer';
  at: string;
  scope: string;
  summary: AgentText;
  request_id?: string;
}

interface Page {
  requests: OpenRequestItem[];
  writes: WriteItem[];
  next?: CursorState;
}

/**
 * whats_new: open requests addressed to this connection, then what was saved since its mark,
 * newest first. A plain call reads from the mark (the last 7 days on a first call) and moves
 * the mark to now; `since` is a peek that leaves the mark; a `cursor` continues a full reply
 * over the same window, so writes arriving meanwhile wait for the next call instead of
 * shifting the pages.
 */
export class WhatsNew {
  constructor(private readonly store: Store) {}

  async read(input: WhatsNewInput, client: string) {
    const me = connectionKey(client);
    if (input.scope !== undefined) {
      const bad = scopeProblem(input.scope);
      if (bad) return refuse(bad);
    }
    let since: number | undefined;
    if (input.since !== undefined) {
      since = parseInstant(input.since);
      if (since === undefined) return refuse(`since "${input.since.slice(0, 60)}" is not an ISO instant such as 2026-11-30T12:00:00Z`);
    }
    if (input.cursor !== undefined) {
      const state = decodeCursor(input.cursor, me, { since, scope: input.scope, includeOwn: input.include_own });
      if ('ok' in state) return state;
      return this.reply(client, state, buildPage(this.store.db, state), { moved: false, why: 'a cursor continues the earlier reply; the mark moved then' });
    }
    const base = { k: me, sc: input.scope ?? null, o: input.include_own ?? false, p: 'r' as const, v: 1 as const };
    if (since !== undefined) {
      const state: CursorState = { ...base, s: since, u: this.store.now, f: 'since' };
      return this.reply(client, state, buildPage(this.store.db, state), { moved: false, why: 'a read with since is a peek' });
    }
    return this.store.commit((db) => {
      const until = this.store.now;
      const mark = queryScalar(db, 'SELECT whats_new_mark FROM connections WHERE key = ?', [me]);
      const hasMark = mark !== undefined && mark !== null;
      const state: CursorState = { ...base, s: hasMark ? Number(mark) : until - FIRST_CALL_WINDOW_MS, u: until, f: hasMark ? 'mark' : 'first_call' };
      const op: MarkMoved = { op: 'requests.mark.moved', at: until, key: me, name: client.trim(), mark: until };
      return { op, result: this.reply(client, state, buildPage(db, state), { moved: true, mark: iso(until) }) };
    });
  }

  private reply(client: string, state: CursorState, page: Page, mark: { moved: boolean; mark?: string; why?: string }) {
    const me = state.k;
    const total = Number(
      queryScalar(this.store.db, `SELECT count(*) FROM agent_requests WHERE addressee_key = ? AND status = 'open'${state.sc === null ? '' : ' AND scope = ?'}`, state.sc === null ? [me] : [me, state.sc]),
    );
    return {
      ok: true as const,
      connection: client.trim(),
      window: { since: iso(state.s), until: iso(state.u), from: state.f },
      mark,
      open_requests: page.requests,
      open_requests_total: total,
      writes: page.writes,
      ...(page.next
        ? { cursor: encodeCursor(page.next), next: 'This reply is full: call whats_new again with this cursor before you start the task.' }
        : {}),
      excerpts: `Each summary and request is excerpted to ${EXCERPT_CHARS} characters (full_chars gives the full length); list_requests returns a request in full, read_memory or retrieve_memory a write.`,
      notice: UNTRUSTED_NOTICE,
    };
  }
}

function buildPage(db: Database, start: CursorState): Page {
  let state = start;
  let room = WHATS_NEW_PAGE;
  let requests: OpenRequestItem[] = [];
  if (state.p === 'r') {
    const rows = openRequests(db, state, room + 1);
    if (rows.length > room) {
      const shown = rows.slice(0, room);
      const last = shown[shown.length - 1] as Record<string, SqlValue>;
      return { requests: shown.map((r) => openItem(r, state.k)), writes: [], next: { ...state, a: Number(last.created_at), i: String(last.id) } };
    }
    requests = rows.map((r) => openItem(r, state.k));
    room -= rows.length;
    state = { v: 1, k: state.k, s: state.s, u: state.u, f: state.f, sc: state.sc, o: state.o, p: 'w' };
  }
  const after = state.a !== undefined && state.i !== undefined ? { at: state.a, id: state.i } : undefined;
  const items = readFeed(db, { readerKey: state.k, since: state.s, until: state.u, scope: state.sc ?? undefined, includeOwn: state.o, after, limit: room + 1 });
  const shown = items.slice(0, room);
  const writes = shown.map((w) => ({
    id: w.id,
    kind: w.kind,
    at: iso(w.at),
    scope: w.scope,
    summary: agentText(w.author, w.text, state.k, EXCERPT_CHARS),
    ...(w.requestId ? { request_id: w.requestId } : {}),
  }));
  if (items.length <= room) return { requests, writes };
  const last = shown[shown.length - 1];
  // A page filled by requests alone continues with the writes from their start.
  const next: CursorState = last ? { ...state, a: last.at, i: last.id } : state;
  return { requests, writes, next };
}

function openRequests(db: Database, st: CursorState, limit: number): Record<string, SqlValue>[] {
  const where = new Conditions("addressee_key = ? AND status = 'open' AND created_at <= ?", st.k, st.u).addIf(st.sc ?? undefined, 'scope = ?');
  if (st.a !== undefined && st.i !== undefined) where.add('(created_at < ? OR (created_at = ? AND id < ?))', st.a, st.a, st.i);
  return queryRows(db, `SELECT id, asker, text, scope, created_at FROM agent_requests WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT ?`, [...where.params, limit]);
}

function openItem(r: Record<string, SqlValue>, readerKey: string): OpenRequestItem {
  return {
    id: String(r.id),
    from: String(r.asker),
    scope: String(r.scope),
    asked_at: iso(Number(r.created_at)),
    request: agentText(String(r.asker), String(r.text), readerKey, EXCERPT_CHARS),
  };
}

function encodeCursor(state: CursorState): string {
  return Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, me: string, given: { since: number | undefined; scope: string | undefined; includeOwn: boolean | undefined }): CursorState | Refusal {
  let state: CursorState;
  try {
    const parsed = CursorState.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (!parsed.success) throw new Error('shape');
    state = parsed.data;
  } catch {
    return refuse('cursor is not one whats_new returned; send the cursor exactly as the previous reply gave it, or call without one');
  }
  if (state.k !== me) return refuse("cursor belongs to another connection's whats_new; call without it");
  const clash =
    (given.since !== undefined && given.since !== state.s) ||
    (given.scope !== undefined && given.scope !== state.sc) ||
    (given.includeOwn !== undefined && given.includeOwn !== state.o);
  if (clash) return refuse('the cursor carries the since, scope and include_own of the reply it came from; send it alone (or with the same values)');
  return state;
}
