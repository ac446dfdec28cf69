import { HISTORY_FTS } from '../history/historySchema';
import { searchFts, type SearchOutcome, type SearchRequest } from '../search/ftsSearch';
import type { Store } from '../store/store';
import { queryRows, type Database } from '../store/sqlite';
import { EXCLUDED_SOURCES } from './lcmConfig';

/** Past this many excluded rows the scope filter runs instead (collecting their ids costs more than it saves). */
const EXCLUDED_MAX = 2_000;

export type ExcludedDocids = ReadonlySet<number> | 'many';

/**
 * The excluded sources' event ids (Recollect's own tool-call log), or 'many' past EXCLUDED_MAX.
 * Kept per store version (equal versions are the same state), so a search repeated before
 * anything was written skips the statement; any write, this log's own included, reads them afresh.
 */
export class ExcludedEvents {
  private cached: { version: number; ids: ExcludedDocids } | undefined;

  constructor(private readonly store: Store) {}

  docids(): ExcludedDocids {
    const db = this.store.db;
    const version = this.store.version;
    if (this.cached?.version === version) return this.cached.ids;
    // Event ids are the index's docids; they come from the sessions' index entries, not from the rows.
    const rows = queryRows(
      db,
      `SELECT e.id FROM events e JOIN sessions s ON s.id = e.session_id WHERE s.source IN (${EXCLUDED_SOURCES.map(() => '?').join(',')}) LIMIT ?`,
      [...EXCLUDED_SOURCES, EXCLUDED_MAX + 1],
    );
    const ids: ExcludedDocids = rows.length > EXCLUDED_MAX ? 'many' : new DocidSet(rows.map((r) => Number(r.id)));
    this.cached = { version, ids };
    return ids;
  }
}

/**
 * A set of docids that rules out those outside its smallest..largest range by comparison before
 * any lookup. The scorer asks it about every match of the query, and Recollect's own log is
 * written after what it searches, so its ids sit together at the top: on the 1 GB bench store
 * the 15,535 questions "ollama" asks took ~0.26 ms through Set.has, ~0.02 so.
 * Never added to after it is made (a new log row gives a new store version, and a new set).
 */
export class DocidSet extends Set<number> {
  private readonly min: number;
  private readonly max: number;

  constructor(ids: readonly number[]) {
    super(ids);
    let min = Infinity;
    let max = -Infinity;
    for (const id of ids) {
      if (id < min) min = id;
      if (id > max) max = id;
    }
    this.min = min;
    this.max = max;
  }

  override has(id: number): boolean {
    return id >= this.min && id <= this.max && super.has(id);
  }
}

/**
 * Full-text search of every conversation's messages, leaving out the excluded sources (Recollect's
 * own tool-call log). A filter on the scope column makes the scorer read every match's row, which
 * on a common word costs more than the search itself. The excluded rows are few, so their ids are
 * collected and the scorer drops them after scoring: scores do not depend on the filter (the
 * corpus statistics are the whole table's either way), so the result is exactly the filtered
 * search's, in one pass. That log holds the very words agents searched for, so over-fetching
 * and dropping afterwards would often need a second and third pass.
 */
export function allMessages(db: Database, req: Omit<SearchRequest, 'filters' | 'excludeScopes'>, excluded: ExcludedDocids): SearchOutcome {
  if (excluded === 'many') return searchFts(db, HISTORY_FTS, { ...req, excludeScopes: EXCLUDED_SOURCES });
  return searchFts(db, HISTORY_FTS, excluded.size ? { ...req, excludeDocids: excluded } : req);
}
