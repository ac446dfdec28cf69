import { queryScalar, type Database } from '../store/sqlite';

/**
 * memory_status's counts. Notes are files (every live vault file, plus day logs the store has
 * entries for whose file is not written yet); chunks are what the keyword index holds for notes
 * and entries; facts include superseded values. Retired memories are counted apart: they are
 * out of recall but kept.
 */
export function memoryCounts(db: Database) {
  const one = (sql: string) => Number(queryScalar(db, sql) ?? 0);
  return {
    notes:
      one('SELECT count(*) FROM vault_files WHERE retired_at IS NULL') +
      one('SELECT count(DISTINCT path) FROM notes WHERE retired_at IS NULL AND path NOT IN (SELECT path FROM vault_files WHERE retired_at IS NULL)'),
    entries: one('SELECT count(*) FROM notes WHERE retired_at IS NULL'),
    chunks:
      one('SELECT count(*) FROM notes WHERE fts_docid IS NOT NULL') +
      one('SELECT count(*) FROM note_chunks WHERE fts_docid IS NOT NULL'),
    entities: one('SELECT count(DISTINCT subject_key) FROM facts WHERE retired_at IS NULL'),
    facts: one('SELECT count(*) FROM facts WHERE retired_at IS NULL'),
    current_facts: one('SELECT count(*) FROM facts WHERE superseded_at IS NULL AND retired_at IS NULL'),
    retired: {
      facts: one('SELECT count(*) FROM facts WHERE retired_at IS NOT NULL'),
      entries: one('SELECT count(*) FROM notes WHERE retired_at IS NOT NULL'),
      notes: one("SELECT count(*) FROM vault_files WHERE retired_at IS NOT NULL AND kind != 'daily'"),
    },
  };
}
