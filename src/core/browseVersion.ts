import { MemoryBrowse } from './memory/memoryBrowse';
import type { Store } from './store/store';
import { queryScalar } from './store/sqlite';

/**
 * A mark that moves whenever anything the memory browser shows does: memory (MemoryBrowse's own
 * version), error fixes (each confirmation bumps times_recorded), rules and their decisions,
 * requests (asked, answered again, closed) and imported sessions. Rows in these tables are only
 * ever added or counted up, so sums and maxima move on every write — except imported sessions,
 * which a person may forget: the tombstones' count and newest time move then. One query, cheap
 * enough to ask every few seconds while the view is visible.
 */
export function browseVersion(store: Store, memory = new MemoryBrowse(store)): string {
  const others = queryScalar(
    store.db,
    `SELECT (SELECT coalesce(sum(times_recorded), 0) FROM errors)
      || ':' || (SELECT count(*) FROM rules) || ':' || (SELECT count(*) FROM rule_decisions)
      || ':' || (SELECT count(*) + coalesce(sum(answers), 0) + count(closed_at) FROM agent_requests)
      || ':' || (SELECT count(*) FROM sessions) || ':' || (SELECT coalesce(max(id), 0) FROM events)
      || ':' || (SELECT count(*) || '.' || coalesce(max(forgotten_at), 0) FROM forgotten_sessions)`,
  );
  return `${memory.version()}|${String(others ?? '')}`;
}
