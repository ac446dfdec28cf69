import { queryRows, type Database } from '../../store/sqlite';

/**
 * Which chunk of which note a row of the memory search index is, for the rows that are note
 * chunks (entries and facts are absent). Chunks of history notes are indexed in a table of their
 * own (indexRows.ts chunkTable), whose docids overlap these, so they are left out.
 */
export function chunkRefs(db: Database, docids: readonly number[]): Map<number, { fileId: string; seq: number; line: number }> {
  const out = new Map<number, { fileId: string; seq: number; line: number }>();
  if (!docids.length) return out;
  const rows = queryRows(
    db,
    `SELECT c.fts_docid, c.file_id, c.seq, c.line FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
     WHERE c.fts_docid IN (${docids.map(() => '?').join(',')}) AND f.kind != 'history'`,
    [...docids],
  );
  for (const r of rows) out.set(Number(r.fts_docid), { fileId: String(r.file_id), seq: Number(r.seq), line: Number(r.line) });
  return out;
}
