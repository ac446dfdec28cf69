import { queryRows, type Database } from '../../store/sqlite';

/** Which chunk of which note an FTS row is, for the rows that are note chunks (entries and facts are absent). */
export function chunkRefs(db: Database, docids: readonly number[]): Map<number, { fileId: string; seq: number; line: number }> {
  const out = new Map<number, { fileId: string; seq: number; line: number }>();
  if (!docids.length) return out;
  const rows = queryRows(db, `SELECT fts_docid, file_id, seq, line FROM note_chunks WHERE fts_docid IN (${docids.map(() => '?').join(',')})`, [...docids]);
  for (const r of rows) out.set(Number(r.fts_docid), { fileId: String(r.file_id), seq: Number(r.seq), line: Number(r.line) });
  return out;
}
