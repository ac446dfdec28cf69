import { createFtsTableSql, indexTerms } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { Migration, StoreModule } from '../store/schema';
import { queryRows, queryScalar, type Database } from '../store/sqlite';
import { buildInlineGrams, INLINE_GRAMS_SQL } from './inlineGrams';

export const LCM_SUMMARY_FTS = 'lcm_summary_fts';

export type SummaryKind = 'leaf' | 'condensed';

/** One summary as journaled: everything decided by the builder, so replay is exact. */
export interface SummaryRecord {
  id: string;
  sessionId: string;
  depth: number;
  kind: SummaryKind;
  content: string;
  tokens: number;
  earliestAt: number | null;
  latestAt: number | null;
  firstSeq: number;
  lastSeq: number;
  /** Events (for a leaf) or summaries (for a condensed one) below, all the way down. */
  descendantCount: number;
  sourceBytes: number;
  /** "extractive" or "model:<name>". */
  producer: string;
  /** Leaf: the events it covers, in order, with the content hash each had when summarised. */
  sources: { eventId: number; hash: string }[];
  /** Condensed: the summaries it was built from, in order. */
  childIds: string[];
  fileIds: string[];
}

/** Large content kept once, outside the summaries: the blob holds the bytes. */
export interface FileRecord {
  id: string;
  sessionId: string;
  eventId: number;
  blob: string;
  fileName: string;
  mimeType: string;
  byteSize: number;
  tokens: number;
  exploration: string;
}

export interface SummariesAdded extends Operation {
  op: 'lcm.summaries.added';
  sessionId: string;
  files: FileRecord[];
  summaries: SummaryRecord[];
}

/** Summaries whose sources changed or vanished (a rewritten snapshot file); their ancestors go with them. */
export interface SummariesRemoved extends Operation {
  op: 'lcm.summaries.removed';
  sessionId: string;
  ids: string[];
}

const MIGRATIONS: Migration[] = [
  `
  CREATE TABLE lcm_summaries (
    n INTEGER PRIMARY KEY, -- the docid of the summary in the FTS table
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    depth INTEGER NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    earliest_at INTEGER,
    latest_at INTEGER,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    descendant_count INTEGER NOT NULL,
    source_bytes INTEGER NOT NULL,
    producer TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX lcm_summaries_by_session ON lcm_summaries(session_id, depth, first_seq);
  CREATE TABLE lcm_summary_sources (
    summary_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    event_id INTEGER NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (summary_id, ord)
  );
  -- An event belongs to at most one leaf: the store itself refuses a second.
  CREATE UNIQUE INDEX lcm_sources_by_event ON lcm_summary_sources(event_id);
  CREATE TABLE lcm_summary_parents (
    parent_id TEXT NOT NULL,
    child_id TEXT NOT NULL PRIMARY KEY, -- a summary is condensed into at most one parent
    ord INTEGER NOT NULL
  );
  CREATE INDEX lcm_parents_by_parent ON lcm_summary_parents(parent_id, ord);
  CREATE TABLE lcm_files (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    event_id INTEGER NOT NULL,
    blob TEXT NOT NULL,
    file_name TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    byte_size INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    exploration TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX lcm_files_by_event ON lcm_files(event_id);
  CREATE TABLE lcm_summary_files (
    summary_id TEXT NOT NULL,
    file_id TEXT NOT NULL,
    PRIMARY KEY (summary_id, file_id)
  );
  ${createFtsTableSql(LCM_SUMMARY_FTS, ['summary_id', 'session_id', 'depth', 'kind'])}
  `,
  // lcm_grep's regex mode reads every large event (the index holds only its head): this partial
  // index lists them, so the candidates are the FTS matches plus these, looked up by id, instead
  // of a scan of every event. SQLite maintains it on every write, replay included.
  `CREATE INDEX IF NOT EXISTS lcm_events_with_blob ON events(id) WHERE blob IS NOT NULL;`,
  // The same list, covering what lcm_grep reads of a large event (its blob hash, time and
  // session): a large row's blob column lies past ~4 KB of inline head, in overflow pages, and
  // reading it row by row cost more than the whole rest of a selective search.
  `CREATE INDEX IF NOT EXISTS lcm_large_events ON events(id, blob, created_at, session_id) WHERE blob IS NOT NULL;
   DROP INDEX IF EXISTS lcm_events_with_blob;`,
  // The gram filter of inline events (inlineGrams.ts), built here from the events already stored;
  // from then on it is written with the events.
  {
    sql: INLINE_GRAMS_SQL,
    fill: (db, progress) => buildInlineGrams(db, progress && ((done, total) => progress('building the regex filter of inline events', done, total))),
  },
];

function applySummariesAdded(db: Database, op: Operation): void {
  const { files, summaries } = op as SummariesAdded;
  for (const f of files) {
    db.run(
      `INSERT OR IGNORE INTO lcm_files(id, session_id, event_id, blob, file_name, mime_type, byte_size, tokens, exploration, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [f.id, f.sessionId, f.eventId, f.blob, f.fileName, f.mimeType, f.byteSize, f.tokens, f.exploration, op.at],
    );
  }
  for (const s of summaries) {
    db.run(
      `INSERT INTO lcm_summaries(id, session_id, depth, kind, content, tokens, earliest_at, latest_at, first_seq, last_seq, descendant_count, source_bytes, producer, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [s.id, s.sessionId, s.depth, s.kind, s.content, s.tokens, s.earliestAt, s.latestAt, s.firstSeq, s.lastSeq, s.descendantCount, s.sourceBytes, s.producer, op.at],
    );
    const n = Number(queryScalar(db, 'SELECT last_insert_rowid()'));
    s.sources.forEach((src, i) => db.run('INSERT INTO lcm_summary_sources(summary_id, ord, event_id, hash) VALUES (?, ?, ?, ?)', [s.id, i, src.eventId, src.hash]));
    s.childIds.forEach((child, i) => db.run('INSERT INTO lcm_summary_parents(parent_id, child_id, ord) VALUES (?, ?, ?)', [s.id, child, i]));
    for (const fileId of s.fileIds) db.run('INSERT OR IGNORE INTO lcm_summary_files(summary_id, file_id) VALUES (?, ?)', [s.id, fileId]);
    db.run(`INSERT INTO ${LCM_SUMMARY_FTS}(docid, terms, body, created_at, scope, summary_id, session_id, depth, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      n, indexTerms(s.content), s.content, s.latestAt ?? op.at, s.sessionId, s.id, s.sessionId, s.depth, s.kind,
    ]);
  }
}

function applySummariesRemoved(db: Database, op: Operation): void {
  const { ids, sessionId } = op as SummariesRemoved;
  for (const id of ids) {
    const n = queryScalar(db, 'SELECT n FROM lcm_summaries WHERE id = ?', [id]);
    if (n === undefined) continue;
    db.run(`DELETE FROM ${LCM_SUMMARY_FTS} WHERE docid = ?`, [n]);
    db.run('DELETE FROM lcm_summary_sources WHERE summary_id = ?', [id]);
    // Its children stay: they are valid on their own and will be condensed again.
    db.run('DELETE FROM lcm_summary_parents WHERE parent_id = ? OR child_id = ?', [id, id]);
    db.run('DELETE FROM lcm_summary_files WHERE summary_id = ?', [id]);
    db.run('DELETE FROM lcm_summaries WHERE id = ?', [id]);
  }
  // A file no summary cites any more is forgotten; its id is derived from the event, so a rebuilt leaf names it again.
  db.run('DELETE FROM lcm_files WHERE session_id = ? AND id NOT IN (SELECT file_id FROM lcm_summary_files)', [sessionId]);
}

export const lcmModule: StoreModule = {
  name: 'lcm',
  migrations: MIGRATIONS,
  appliers: {
    'lcm.summaries.added': applySummariesAdded,
    'lcm.summaries.removed': applySummariesRemoved,
  },
};

/** Summaries of a session that are not yet condensed, per depth, oldest first. */
export function uncondensed(db: Database, sessionId: string, depth: number): { id: string; firstSeq: number }[] {
  return queryRows(
    db,
    `SELECT s.id, s.first_seq FROM lcm_summaries s LEFT JOIN lcm_summary_parents p ON p.child_id = s.id
     WHERE s.session_id = ? AND s.depth = ? AND p.parent_id IS NULL ORDER BY s.first_seq`,
    [sessionId, depth],
  ).map((r) => ({ id: String(r.id), firstSeq: Number(r.first_seq) }));
}
