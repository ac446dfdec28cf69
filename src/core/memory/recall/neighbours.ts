import { queryRows, type Database } from '../../store/sqlite';

/**
 * The passages written next to each given one in the same file: for a day-log entry, the live
 * entry before and after it in that day's log; for a note chunk, the chunks before and after it
 * in that note. Keys and values are rows of the memory index (docids).
 *
 * Recall uses them because what answers a question is often split over neighbouring passages:
 * a person asks in one entry and the answer is the next one, or a name is in one and what
 * happened in the next. An entry whose neighbour matches the request is worth showing too.
 */
export function neighbourDocids(db: Database, entryIds: readonly string[], chunkDocids: readonly number[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const add = (row: Record<string, unknown>) => {
    const around = [row.prev, row.next].filter((d): d is number => typeof d === 'number');
    if (typeof row.docid === 'number' && around.length) out.set(row.docid, around);
  };
  if (entryIds.length) {
    // Order within a day log is the order entries were written (created_at, then rowid for two
    // in the same millisecond). Both look-ups are read from indexes alone (memorySchema.ts): the
    // entry from notes_ranked (SQLite would take the table's unique id index and read the row),
    // its neighbours from notes_by_path_time, from the entry's time on (the bound on created_at
    // stated apart from the tie-break, so that it is used as a range, not tested on every
    // entry of the log).
    const rows = queryRows(
      db,
      `SELECT n.fts_docid AS docid,
        (SELECT p.fts_docid FROM notes p WHERE p.path = n.path AND p.retired_at IS NULL AND p.fts_docid IS NOT NULL
           AND p.created_at <= n.created_at AND (p.created_at < n.created_at OR p.rowid < n.rowid) ORDER BY p.created_at DESC, p.rowid DESC LIMIT 1) AS prev,
        (SELECT p.fts_docid FROM notes p WHERE p.path = n.path AND p.retired_at IS NULL AND p.fts_docid IS NOT NULL
           AND p.created_at >= n.created_at AND (p.created_at > n.created_at OR p.rowid > n.rowid) ORDER BY p.created_at, p.rowid LIMIT 1) AS next
      FROM notes n INDEXED BY notes_ranked WHERE n.id IN (SELECT value FROM json_each(?)) AND n.fts_docid IS NOT NULL`,
      [JSON.stringify(entryIds)],
    );
    rows.forEach(add);
  }
  if (chunkDocids.length) {
    const rows = queryRows(
      db,
      `SELECT c.fts_docid AS docid,
        (SELECT p.fts_docid FROM note_chunks p WHERE p.file_id = c.file_id AND p.seq = c.seq - 1) AS prev,
        (SELECT p.fts_docid FROM note_chunks p WHERE p.file_id = c.file_id AND p.seq = c.seq + 1) AS next
      FROM note_chunks c WHERE c.fts_docid IN (SELECT value FROM json_each(?))`,
      [JSON.stringify(chunkDocids)],
    );
    rows.forEach(add);
  }
  return out;
}
