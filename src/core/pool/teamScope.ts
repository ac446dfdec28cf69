import type { Operation } from '../store/journal';
import { queryScalar, type Database } from '../store/sqlite';

/**
 * How a write is marked for the team: its scope is `team:<name>`. Nothing else leaves the
 * machine: `global` and `project:` scopes, imported chat history, rule approvals (per machine by
 * the chapters spec), connections' read marks and every store-internal operation.
 */
export const TEAM_PREFIX = 'team:';
const TEAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function teamScope(team: string): string {
  return `${TEAM_PREFIX}${team}`;
}

export function teamNameProblem(team: string): string | undefined {
  return TEAM_NAME.test(team) ? undefined : `team name "${team.slice(0, 120)}" is not letters, digits, . _ - (at most 100, starting with a letter or digit)`;
}

function teamOfScope(scope: unknown): string | undefined {
  return typeof scope === 'string' && scope.startsWith(TEAM_PREFIX) ? scope.slice(TEAM_PREFIX.length) : undefined;
}

/** Operations whose own `scope` field says where they belong. */
const SCOPED_OPS = new Set(['memory.fact.saved', 'memory.fact.remembered', 'memory.note.added', 'requests.asked']);
/** Operations that follow the request they name: an answer or a close of a team request is the team's too. */
const REQUEST_FOLLOWERS = new Set(['requests.answered', 'requests.closed']);

/**
 * The team an operation of this machine is shared with, or undefined when it stays here. `db`
 * is the local database (a request's answer is shared when the request was).
 */
export function teamOfOperation(op: Operation, db: Database): string | undefined {
  if (SCOPED_OPS.has(op.op)) return teamOfScope(op.scope);
  if (REQUEST_FOLLOWERS.has(op.op) && typeof op.id === 'string') return teamOfScope(queryScalar(db, 'SELECT scope FROM agent_requests WHERE id = ?', [op.id]));
  return undefined;
}

/**
 * What another machine receives: the operation without what only describes this machine's
 * files (a day log's size and hash on this disk), which would make the receiver take its own
 * file for already indexed.
 */
export function portableOperation(op: Operation): Operation {
  const rest: Record<string, unknown> = { ...op };
  delete rest.file;
  if (op.op === 'memory.fact.remembered' && rest.entry && typeof rest.entry === 'object') {
    const entry = { ...(rest.entry as Record<string, unknown>) };
    delete entry.file;
    rest.entry = entry;
  }
  return rest as Operation;
}
