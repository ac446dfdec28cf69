import type { Store } from '../store/store';
import { queryRows, type Database } from '../store/sqlite';
import { iso } from '../text/time';
import { connectionKey, connectionProblem } from './connectionName';
import type { ConnectionSeen } from './requestsSchema';

export interface ConnectionRecord {
  name: string;
  first_seen_at: string;
  /** Its first call, a changed spelling of its name or its latest whats_new, whichever came last. */
  last_seen_at: string;
}

/**
 * Which named connections have connected to this workspace. "Workspace" is the store: every
 * VS Code window, MCP server and CLI sharing one store home sees the same connections; scopes
 * only restrict what a read returns. A connection counts as connected once it has made a call.
 */
export class Connections {
  constructor(private readonly store: Store) {}

  /**
   * Records that `name` made a call. Journaled once per connection (and when its spelling
   * changes), so the reads of a connection already known write nothing. Unnamed connections are
   * not recorded: nobody could address them.
   */
  async seen(name: string): Promise<void> {
    if (connectionProblem(name)) return;
    const key = connectionKey(name);
    if (this.fresh(this.store.db, key, name)) return;
    await this.store.commit((db) => {
      if (this.fresh(db, key, name)) return { result: undefined };
      const op: ConnectionSeen = { op: 'requests.connection.seen', at: this.store.now, key, name: name.trim() };
      return { op, result: undefined };
    });
  }

  find(db: Database, name: string): { key: string; name: string } | undefined {
    const row = queryRows(db, 'SELECT key, name FROM connections WHERE key = ?', [connectionKey(name)])[0];
    return row ? { key: String(row.key), name: String(row.name) } : undefined;
  }

  /** Every connection, most recently seen first. */
  list(db: Database = this.store.db, limit = 50): ConnectionRecord[] {
    return queryRows(db, 'SELECT name, first_seen_at, last_seen_at FROM connections ORDER BY last_seen_at DESC, key LIMIT ?', [limit]).map((r) => ({
      name: String(r.name),
      first_seen_at: iso(Number(r.first_seen_at)),
      last_seen_at: iso(Number(r.last_seen_at)),
    }));
  }

  private fresh(db: Database, key: string, name: string): boolean {
    const row = queryRows(db, 'SELECT name FROM connections WHERE key = ?', [key])[0];
    // A changed spelling ("Claude-Code" → "claude-code") is recorded at once so the name shown is the current one.
    return !!row && String(row.name) === name.trim();
  }
}
