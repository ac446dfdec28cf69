import { newId } from '../ids';
import { DEFAULT_SCOPE, scopeProblem } from '../memory/scope';
import { Redaction } from '../privacy/redaction';
import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { Conditions, queryRows, queryScalar, type Database, type SqlValue } from '../store/sqlite';
import { textProblem } from '../text/textRules';
import { iso } from '../text/time';
import { agentText, UNTRUSTED_NOTICE, type AgentText } from './agentText';
import { connectionKey, connectionProblem } from './connectionName';
import { Connections } from './connections';
import type { RequestAnswered, RequestAsked, RequestClosed, RequestStatus } from './requestsSchema';
import { WhatsNew, type WhatsNewInput } from './whatsNew';

export const ASK_LIMIT_DEFAULT = 30;
export const ASK_WINDOW_MS = 3_600_000;
export const LIST_MAX = 20;
/** The longest request or answer; longer is refused, never cut. */
export const REQUEST_TEXT_MAX = 4000;

export interface RequestOptions {
  /**
   * ask_agent calls one connection may make in any hour, or where to read it on each ask (a
   * VS Code setting the person may change while the window runs). Default: RECOLLECT_ASK_LIMIT, else 30.
   */
  askLimitPerHour?: number | (() => number);
  /** Replaces the secrets in a request or an answer before it is recorded. */
  redaction?: Redaction;
}

export interface AskInput {
  to: string;
  request: string;
  scope?: string | undefined;
}

export interface ListInput {
  status?: RequestStatus | undefined;
  to?: string | undefined;
  scope?: string | undefined;
  before?: string | undefined;
}

export interface RequestView {
  id: string;
  from: string;
  to: string;
  status: RequestStatus;
  scope: string;
  asked_at: string;
  request: AgentText;
  answer: AgentText | null;
  answered_at: string | null;
  /** How many times the addressee answered; each answer replaced the one before. */
  answers: number;
  closed_at: string | null;
  closed_by: string | null;
}

/** The env var that sets the hourly ask_agent limit for every surface of this process. */
export function askLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return askLimitFrom(undefined, env);
}

/**
 * The hourly ask_agent limit: RECOLLECT_ASK_LIMIT, else a host's setting, else 30 — the same
 * order as the store home (an env var set for a process speaks for every surface in it).
 * A value that is not a positive whole number counts as not set.
 */
export function askLimitFrom(setting: unknown, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.RECOLLECT_ASK_LIMIT?.trim();
  const fromEnv = raw ? Number(raw) : NaN;
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return typeof setting === 'number' && Number.isInteger(setting) && setting > 0 ? setting : ASK_LIMIT_DEFAULT;
}

/**
 * Requests between named agents sharing this store. Recording a request or an answer runs
 * nothing and wakes nobody: the other agent sees it in whats_new at the start of its next task.
 * Every check (who may answer, who may close, the hourly limit) is made inside the commit, on
 * the latest state of every process, so two servers cannot together exceed a limit.
 */
export class RequestService {
  private readonly limit: () => number;
  /** Which named connections have connected; every surface reports each call here. */
  readonly connections: Connections;
  private readonly feed: WhatsNew;
  private readonly redaction: Redaction;

  constructor(
    private readonly store: Store,
    options: RequestOptions = {},
  ) {
    const limit = options.askLimitPerHour ?? askLimitFromEnv();
    this.limit = typeof limit === 'function' ? limit : () => limit;
    this.connections = new Connections(store);
    this.feed = new WhatsNew(store);
    this.redaction = options.redaction ?? new Redaction();
  }

  async whatsNew(input: WhatsNewInput, client: string) {
    const named = await this.named(client);
    if (named) return named;
    return this.feed.read(input, client);
  }

  async ask(input: AskInput, client: string) {
    const named = await this.named(client);
    if (named) return named;
    const problem = textProblem('request', input.request) ?? (input.request.trim() ? undefined : 'request is empty');
    const scope = input.scope ?? DEFAULT_SCOPE;
    const bad = problem ?? scopeProblem(scope);
    if (bad) return refuse(`${bad}. Nothing was recorded.`);
    const me = connectionKey(client);
    const text = await this.redaction.text(input.request, scope);

    return this.store.commit((db) => {
      const at = this.store.now;
      const to = this.connections.find(db, input.to);
      if (!to) return { result: refuse(`${unknownAgent(input.to, this.connections.list(db))} Nothing was recorded.`) };
      if (to.key === me) return { result: refuse(`"${input.to}" is this connection; a request is for another agent. Nothing was recorded.`) };
      const used = Number(queryScalar(db, 'SELECT count(*) FROM agent_requests WHERE asker_key = ? AND created_at > ?', [me, at - ASK_WINDOW_MS]));
      const limit = this.limit();
      if (used >= limit) {
        const oldest = Number(queryScalar(db, 'SELECT min(created_at) FROM agent_requests WHERE asker_key = ? AND created_at > ?', [me, at - ASK_WINDOW_MS]));
        return {
          result: refuse(
            `this connection recorded ${used} requests in the last hour, the limit is ${limit}; the next one can be recorded after ${iso(oldest + ASK_WINDOW_MS)}. Nothing was recorded.`,
            { limit, used, unit: 'requests' },
          ),
        };
      }
      const op: RequestAsked = { op: 'requests.asked', at, id: `req-${newId(at)}`, from: client.trim(), fromKey: me, to: to.name, toKey: to.key, text, scope };
      return {
        op,
        result: {
          ok: true as const,
          id: op.id,
          from: op.from,
          to: to.name,
          scope,
          status: 'open' as const,
          asked_at: iso(at),
          this_hour: { limit, used: used + 1, unit: 'requests' as const },
          note: `Recorded only: ${to.name} sees it in whats_new at the start of its next task and answers if its own rules say to. Read the answer with list_requests (to: "${to.name}", status: "answered") or in your whats_new.`,
        },
      };
    });
  }

  async list(input: ListInput, client: string) {
    const named = await this.named(client);
    if (named) return named;
    if (input.scope !== undefined) {
      const bad = scopeProblem(input.scope);
      if (bad) return refuse(bad);
    }
    const db = this.store.db;
    const me = connectionKey(client);
    const status = input.status ?? 'open';
    const where = new Conditions('status = ?', status);
    let other: string | undefined;
    if (input.to !== undefined) {
      const to = this.connections.find(db, input.to);
      if (!to) return refuse(unknownAgent(input.to, this.connections.list(db)));
      other = to.name;
      where.add('((asker_key = ? AND addressee_key = ?) OR (asker_key = ? AND addressee_key = ?))', me, to.key, to.key, me);
    } else {
      where.add('addressee_key = ?', me);
    }
    where.addIf(input.scope, 'scope = ?');
    if (input.before !== undefined) {
      const anchor = queryRows(db, 'SELECT created_at FROM agent_requests WHERE id = ? AND (asker_key = ? OR addressee_key = ?)', [input.before, me, me])[0];
      if (!anchor) return refuse(`before: "${input.before.slice(0, 80)}" is not the id of a request this connection is a party to`);
      const at = Number(anchor.created_at);
      where.add('(created_at < ? OR (created_at = ? AND id < ?))', at, at, input.before);
    }
    const total = Number(queryScalar(db, `SELECT count(*) FROM agent_requests WHERE ${where.sql}`, where.params));
    const rows = queryRows(db, `SELECT * FROM agent_requests WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT ?`, [...where.params, LIST_MAX]);
    const requests = rows.map((r) => requestView(r, me));
    const more = total - requests.length;
    return {
      ok: true as const,
      connection: client.trim(),
      status,
      ...(other ? { between: [client.trim(), other] } : { addressed_to: client.trim() }),
      requests,
      shown: requests.length,
      more_requests: more,
      ...(more > 0 ? { next_before: requests[requests.length - 1]?.id } : {}),
      notice: UNTRUSTED_NOTICE,
    };
  }

  async answer(input: { id: string; answer: string }, client: string) {
    const named = await this.named(client);
    if (named) return named;
    const problem = textProblem('answer', input.answer) ?? (input.answer.trim() ? undefined : 'answer is empty');
    if (problem) return refuse(`${problem}. Nothing was recorded.`);
    const me = connectionKey(client);
    // An answer belongs to its request's scope (read again inside the commit; a request's scope never changes).
    const asked = requestRow(this.store.db, input.id);
    const answer = await this.redaction.text(input.answer, asked ? String(asked.scope) : DEFAULT_SCOPE);
    return this.store.commit((db) => {
      const row = requestRow(db, input.id);
      if (!row) return { result: refuse(`no request has the id "${input.id.slice(0, 80)}". Nothing was recorded.`) };
      if (String(row.addressee_key) !== me) {
        return { result: refuse(`request ${input.id} is addressed to "${String(row.addressee)}"; only that agent can answer it, and this connection is "${client.trim()}". Nothing was recorded.`) };
      }
      if (row.status === 'closed') return { result: refuse(`request ${input.id} was closed by "${String(row.closed_by)}" at ${iso(Number(row.closed_at))}; a closed request takes no answer. Nothing was recorded.`) };
      const at = this.store.now;
      const op: RequestAnswered = { op: 'requests.answered', at, id: input.id, by: client.trim(), answer };
      const previous = row.answered_at === null ? null : iso(Number(row.answered_at));
      return {
        op,
        result: { ok: true as const, id: input.id, status: 'answered' as const, answered_at: iso(at), replaced_answer_of: previous, to: String(row.asker), note: 'Recorded only: the asker reads it in whats_new or list_requests.' },
      };
    });
  }

  async close(input: { id: string }, client: string) {
    const named = await this.named(client);
    if (named) return named;
    const me = connectionKey(client);
    return this.store.commit((db) => {
      const row = requestRow(db, input.id);
      if (!row) return { result: refuse(`no request has the id "${input.id.slice(0, 80)}". Nothing was changed.`) };
      if (String(row.asker_key) !== me && String(row.addressee_key) !== me) {
        return { result: refuse(`request ${input.id} is between "${String(row.asker)}" and "${String(row.addressee)}"; only they can close it, and this connection is "${client.trim()}". Nothing was changed.`) };
      }
      if (row.status === 'closed') {
        return { result: { ok: true as const, id: input.id, status: 'closed' as const, already_closed: true, closed_at: iso(Number(row.closed_at)), closed_by: String(row.closed_by) } };
      }
      const at = this.store.now;
      const op: RequestClosed = { op: 'requests.closed', at, id: input.id, by: client.trim() };
      return { op, result: { ok: true as const, id: input.id, status: 'closed' as const, already_closed: false, closed_at: iso(at), closed_by: op.by } };
    });
  }

  /** The refusal for an unnamed connection; a named one is recorded as connected on the way. */
  private async named(client: string): Promise<Refusal | undefined> {
    const problem = connectionProblem(client);
    if (problem) return refuse(`${problem}. Nothing was read or recorded.`);
    await this.connections.seen(client);
    return undefined;
  }
}

export function requestView(r: Record<string, SqlValue>, readerKey: string): RequestView {
  return {
    id: String(r.id),
    from: String(r.asker),
    to: String(r.addressee),
    status: String(r.status) as RequestStatus,
    scope: String(r.scope),
    asked_at: iso(Number(r.created_at)),
    request: agentText(String(r.asker), String(r.text), readerKey),
    answer: r.answer === null ? null : agentText(String(r.addressee), String(r.answer), readerKey),
    answered_at: r.answered_at === null ? null : iso(Number(r.answered_at)),
    answers: Number(r.answers),
    closed_at: r.closed_at === null ? null : iso(Number(r.closed_at)),
    closed_by: r.closed_by === null ? null : String(r.closed_by),
  };
}

function requestRow(db: Database, id: string): Record<string, SqlValue> | undefined {
  return queryRows(db, 'SELECT * FROM agent_requests WHERE id = ?', [id])[0];
}

function unknownAgent(name: string, known: { name: string }[]): string {
  const names = known.map((c) => `"${c.name}"`).join(', ');
  return `"${name.slice(0, 100)}" has never connected to this store, so no request can be addressed to it. Connections seen so far: ${names || 'none'}.`;
}
