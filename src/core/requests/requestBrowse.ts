import type { Store } from '../store/store';
import { queryRows } from '../store/sqlite';
import { EXCERPT_CHARS, excerpt } from './agentText';
import { requestView, type RequestView } from './requestService';
import type { RequestStatus } from './requestsSchema';

/** A sidebar's worth; older requests are a list_requests away. */
export const REQUESTS_BROWSE_MAX = 100;

export interface RequestOverview {
  requests: RequestView[];
  counts: Record<RequestStatus, number>;
}

/**
 * Every request between agents, newest first, as a person sees them. Unlike list_requests this
 * is nobody's inbox: a person is a party to none of them, so every text is another agent's and
 * comes back marked untrusted (the reader key is empty, which no connection can have).
 */
export function requestOverview(store: Store, limit: number): RequestOverview {
  const n = Math.max(1, Math.min(REQUESTS_BROWSE_MAX, Math.floor(limit)));
  const db = store.db;
  const rows = queryRows(db, 'SELECT * FROM agent_requests ORDER BY created_at DESC, id DESC LIMIT ?', [n]);
  const counts: Record<RequestStatus, number> = { open: 0, answered: 0, closed: 0 };
  for (const r of queryRows(db, 'SELECT status, count(*) AS n FROM agent_requests GROUP BY status')) {
    const status = String(r.status);
    if (status === 'open' || status === 'answered' || status === 'closed') counts[status] = Number(r.n);
  }
  return { requests: rows.map((r) => excerpted(requestView(r, ''))), counts };
}

/** Long texts are cut for the list; the full length stays visible so nothing looks whole that is not. */
function excerpted(v: RequestView): RequestView {
  const max = EXCERPT_CHARS * 4;
  const cut = (t: RequestView['request']) => (t.text.length > max ? { ...t, text: excerpt(t.text, max), full_chars: t.text.length } : t);
  return { ...v, request: cut(v.request), answer: v.answer ? cut(v.answer) : null };
}
