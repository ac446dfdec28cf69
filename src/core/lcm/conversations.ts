import type { HistoryService, SessionHint } from '../history/historyService';
import { refuse, type Refusal } from '../refusal';
import type { Database } from '../store/sqlite';
import { queryRows } from '../store/sqlite';

/**
 * The spec's `conversationId` is a number; a conversation is one imported session, and its
 * number is the session's rowid in the store — assigned in journal order, so every process and
 * every replay gives the same session the same number.
 */
export type ConversationScope =
  | { all: true; how: string }
  | { all: false; conversationId: number; sessionId: string; title: string | null; how: string };

export interface ScopeArgs {
  conversationId?: number | undefined;
  allConversations?: boolean | undefined;
}

export function resolveScope(db: Database, history: HistoryService, hint: SessionHint, args: ScopeArgs): ConversationScope | Refusal {
  if (args.conversationId !== undefined) {
    const row = queryRows(db, 'SELECT id, title FROM sessions WHERE rowid = ?', [args.conversationId])[0];
    if (!row) return refuse(`there is no conversation ${args.conversationId}; lcm_grep with allConversations: true shows the conversation ids there are`);
    return { all: false, conversationId: args.conversationId, sessionId: String(row.id), title: row.title === null ? null : String(row.title), how: `conversation ${args.conversationId}, as asked` };
  }
  if (args.allConversations) return { all: true, how: 'all conversations, as asked' };
  const current = history.currentSession(hint);
  if (!current) return refuse('no conversations are imported yet: run "recollect import <folder>" or let the extension import them, then ask again');
  return { all: false, conversationId: conversationIdOf(db, current.id), sessionId: current.id, title: current.title, how: `the current conversation: ${current.how}` };
}

export function conversationIdOf(db: Database, sessionId: string): number {
  const row = queryRows(db, 'SELECT rowid AS n FROM sessions WHERE id = ?', [sessionId])[0];
  if (!row) throw new Error(`session ${sessionId} is not in the store`);
  return Number(row.n);
}

/** Session id → conversation number, for many sessions in one query. */
export function conversationIds(db: Database, sessionIds: Iterable<string>): Map<string, number> {
  const ids = [...new Set(sessionIds)];
  const out = new Map<string, number>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    for (const r of queryRows(db, `SELECT rowid AS n, id FROM sessions WHERE id IN (${chunk.map(() => '?').join(',')})`, chunk)) out.set(String(r.id), Number(r.n));
  }
  return out;
}

export function describeScope(scope: ConversationScope): { conversationId: number | null; title?: string | null; how: string } {
  return scope.all ? { conversationId: null, how: scope.how } : { conversationId: scope.conversationId, title: scope.title, how: scope.how };
}
