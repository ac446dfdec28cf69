import type { Database } from '../../../src/core/store/sqlite';

/** FTS4's own check that history_fts holds exactly the terms its content (the events) gives: 'ok', or its error. */
export function ftsIntegrity(db: Database): string {
  try {
    db.run("INSERT INTO history_fts(history_fts) VALUES ('integrity-check')");
    return 'ok';
  } catch (e) {
    return (e as Error).message;
  }
}
