import type { ChaptersArchived, ChaptersShared } from '../chapters/chaptersSchema';
import type { RuleProposed } from '../rules/rulesSchema';
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
const SCOPED_OPS = new Set(['memory.fact.saved', 'memory.fact.remembered', 'memory.note.added', 'requests.asked', 'errors.recorded']);
/** Operations that follow the request they name: an answer or a close of a team request is the team's too. */
const REQUEST_FOLLOWERS = new Set(['requests.answered', 'requests.closed']);

/**
 * The team an operation of this machine is shared with, or undefined when it stays here. `db`
 * is the local database (a request's answer is shared when the request was).
 */
export function teamOfOperation(op: Operation, db: Database): string | undefined {
  if (SCOPED_OPS.has(op.op)) return teamOfScope(op.scope);
  // A continue's chapters carry their own scope; the child session never travels.
  if (op.op === 'chapters.archived') return teamOfScope((op as ChaptersArchived).chapters.find((c) => teamOfScope(c.scope))?.scope);
  // A rule's own scope is its tier (project, session); approvals (rules.decided) stay per machine.
  if (op.op === 'rules.proposed') return teamOfScope((op as RuleProposed).sharedScope);
  if (REQUEST_FOLLOWERS.has(op.op) && typeof op.id === 'string') return teamOfScope(queryScalar(db, 'SELECT scope FROM agent_requests WHERE id = ?', [op.id]));
  return undefined;
}

/**
 * What another machine receives: the operation without what only describes this machine's
 * files (a day log's size and hash on this disk), which would make the receiver take its own
 * file for already indexed. A continue travels as its team chapters and their plans, without the
 * child session (it belongs to the chat on this machine) and without chapters kept here.
 */
export function portableOperation(op: Operation): Operation {
  if (op.op === 'chapters.archived') {
    const a = op as ChaptersArchived;
    const chapters = a.chapters.filter((c) => teamOfScope(c.scope));
    const ids = new Set(chapters.map((c) => c.id));
    const shared: ChaptersShared = { op: 'chapters.shared', at: a.at, chapters, plans: a.plans.filter((p) => ids.has(p.chapterId)) };
    return shared;
  }
  const rest: Record<string, unknown> = { ...op };
  delete rest.file;
  if (op.op === 'memory.fact.remembered' && rest.entry && typeof rest.entry === 'object') {
    const entry = { ...(rest.entry as Record<string, unknown>) };
    delete entry.file;
    rest.entry = entry;
  }
  return rest as Operation;
}

/** The blobs a portable operation names, which travel beside it (chapters' and plans' Markdown). */
export function blobsOf(op: Operation): string[] {
  if (op.op !== 'chapters.shared') return [];
  const s = op as ChaptersShared;
  return [...s.chapters.map((c) => c.sha256), ...s.plans.map((p) => p.sha256)];
}
