import { createFtsTableSql, indexTerms } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import { queryRows, queryScalar, runSql, type Database, type SqlValue } from '../store/sqlite';
import { normalizeKey } from '../text/textRules';
import { insertEntryRow, recordDailyStat, type EntryRow } from './vault/indexRows';
import { MEMORY_FTS_TABLE } from './vault/tableNames';
import { vaultAppliers } from './vault/vaultAppliers';
import { NOTE_PATHS_MIGRATION, VAULT_MIGRATION, VAULT_RECORD_VERSION_MIGRATION, type FileStat } from './vault/vaultSchema';
import { EMBEDDINGS_MIGRATION, semanticAppliers, SUPERSEDED_LOG_MIGRATION } from './semantic/semanticSchema';

export const MEMORY_FTS = MEMORY_FTS_TABLE;

/** What a saved fact records (its operation adds the name and the time). */
export interface FactFields {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  scope: string;
  source: string;
  statement: string | null;
  cites: string[];
  /** When the value became true, if not when it was recorded (an import knows the date). */
  validFrom?: number | undefined;
}

/** A fact saved: the ledger keeps every value; the newest per subject+predicate+scope is current. */
export interface FactSaved extends Operation, FactFields {
  op: 'memory.fact.saved';
}

/** What a day-log entry records (its operation adds the name and the time). */
export interface EntryFields extends Omit<EntryRow, 'at'> {
  /** The day log's stat after the writer appended this entry; null when the file had unindexed edits. */
  file?: FileStat | null | undefined;
}

/** A line appended to a day's log (a statement saved on its own, or the sentence behind a fact). */
export interface NoteAdded extends Operation, EntryFields {
  op: 'memory.note.added';
}

/**
 * A fact saved together with the sentence behind it (remember with subject/predicate/object):
 * one journal line, so one fsync and no moment where the fact is durable and its entry not.
 * Journals written before it hold the same thing as a memory.fact.saved line followed by a
 * memory.note.added line; both still apply.
 */
export interface FactRemembered extends Operation, FactFields {
  op: 'memory.fact.remembered';
  /** The day-log entry, recorded at the fact's time. */
  entry: EntryFields;
}

const MIGRATIONS = [
  `
  CREATE TABLE facts (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    predicate TEXT NOT NULL,
    predicate_key TEXT NOT NULL,
    object TEXT NOT NULL,
    scope TEXT NOT NULL,
    source TEXT NOT NULL,
    statement TEXT,
    cites TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    superseded_at INTEGER,
    superseded_by TEXT,
    fts_docid INTEGER
  );
  CREATE INDEX facts_by_key ON facts(subject_key, predicate_key, scope, recorded_at);
  CREATE TABLE notes (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    day TEXT NOT NULL,
    text TEXT NOT NULL,
    scope TEXT NOT NULL,
    source TEXT NOT NULL,
    timezone TEXT,
    cites TEXT NOT NULL,
    fact_id TEXT,
    created_at INTEGER NOT NULL,
    fts_docid INTEGER
  );
  CREATE INDEX notes_by_day ON notes(day);
  ${createFtsTableSql(MEMORY_FTS, ['ref'])}
  `,
  VAULT_MIGRATION,
  VAULT_RECORD_VERSION_MIGRATION,
  // notes_by_path with whether each note is live in the index itself: the look-up of day logs
  // never written (vaultState.ts unrenderedPaths, run by the first search after an open) then
  // reads these few index pages instead of a table row per day log, rows spread over the whole
  // database file, each of which a snapshot read on demand must load.
  'DROP INDEX IF EXISTS notes_by_path; CREATE INDEX notes_by_path ON notes(path, retired_at);',
  // search_text looks up the note chunks among its hits by docid, which scanned every chunk.
  'CREATE INDEX note_chunks_by_docid ON note_chunks(fts_docid);',
  NOTE_PATHS_MIGRATION,
  // get_context reads the entries written just before and after each match in its day log.
  'CREATE INDEX notes_by_path_time ON notes(path, created_at);',
  EMBEDDINGS_MIGRATION,
  // get_context and search_memory look up a few columns of hundreds of rows a request, at random
  // (the keyword and semantic candidates' refs and times, the ranked keys' scope and state, which
  // fact and entry candidates are live, their scope, which facts are rules): in the tables each
  // is a page of its own, and on a store larger than the page and chunk caches nearly every one
  // is read from the file again. These indexes hold only those columns, a tenth of the tables'
  // bytes, which the caches keep (contentColumns.ts reads the FTS one by docid; neighbours.ts
  // walks a day log's entries in notes_by_path_time without their rows).
  `CREATE INDEX facts_ranked ON facts(id, retired_at, scope, recorded_at, fts_docid, superseded_at, predicate_key);
   CREATE INDEX notes_ranked ON notes(id, retired_at, scope, created_at, fts_docid, path);
   DROP INDEX notes_by_path_time;
   CREATE INDEX notes_by_path_time ON notes(path, created_at, retired_at, fts_docid);
   CREATE INDEX ${MEMORY_FTS}_by_docid ON ${MEMORY_FTS}_content(docid, c2created_at, c3scope, c4ref);`,
  SUPERSEDED_LOG_MIGRATION,
];

function applyFactSaved(db: Database, op: Operation): void {
  const f = op as FactSaved;
  const subjectKey = normalizeKey(f.subject);
  const predicateKey = normalizeKey(f.predicate);
  const validFrom = f.validFrom ?? f.at;
  const key = [subjectKey, predicateKey, f.scope];
  const next = firstLater(db, key, f);
  if (next) {
    joinHistory(db, f, validFrom, next);
    return;
  }
  const current = queryRows(db, 'SELECT id, fts_docid FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? AND superseded_at IS NULL', key);
  for (const { id, fts_docid: docid } of current) {
    // The old value was true until the new one became true; it stays in the ledger as history.
    runSql(db, 'UPDATE facts SET superseded_at = ?, superseded_by = ?, valid_to = ?, fts_docid = NULL WHERE id = ?', [f.at, f.id, validFrom, id as string]);
    // Superseded values stay in the ledger (history) but leave the keyword index of current memory.
    if (docid !== null) runSql(db, `DELETE FROM ${MEMORY_FTS} WHERE docid = ?`, [docid as number]);
  }
  const body = `${f.subject} ${f.predicate} ${f.object}`;
  runSql(db, `INSERT INTO ${MEMORY_FTS}(terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)`, [
    indexTerms(body),
    body,
    f.at,
    f.scope,
    `fact:${f.id}`,
  ]);
  const docid = lastRowId(db);
  insertFact(db, f, subjectKey, predicateKey, validFrom, docid, null);
}

function insertFact(db: Database, f: FactSaved, subjectKey: string, predicateKey: string, validFrom: number, docid: number | null, supersededBy: { id: string; at: number; validFrom: number } | null): void {
  runSql(
    db,
    `INSERT INTO facts(id, subject, subject_key, predicate, predicate_key, object, scope, source, statement, cites, recorded_at, fts_docid, valid_from, superseded_at, superseded_by, valid_to)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [f.id, f.subject, subjectKey, f.predicate, predicateKey, f.object, f.scope, f.source, f.statement, JSON.stringify(f.cites), f.at, docid, validFrom, supersededBy?.at ?? null, supersededBy?.id ?? null, supersededBy?.validFrom ?? null],
  );
}

/**
 * "Later" is decided by the recorded time, then the id, never by arrival: a team pool delivers
 * other machines' values in any order, and every machine must end with the same current value.
 * The value recorded right after this one, if any is in the ledger already.
 */
function firstLater(db: Database, key: SqlValue[], f: FactSaved): { id: string; at: number; validFrom: number } | undefined {
  const later = 'FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? AND (recorded_at > ? OR (recorded_at = ? AND id > ?))';
  const params = [...key, f.at, f.at, f.id];
  // The usual answer is "nothing later" (values arrive in order, or the key is new): asked
  // without the order, sql.js gives it about ten times sooner than the ordered query does.
  if (queryScalar(db, `SELECT 1 ${later} LIMIT 1`, params) === undefined) return undefined;
  const row = queryRows(db, `SELECT id, recorded_at, valid_from ${later} ORDER BY recorded_at, id LIMIT 1`, params)[0];
  return row ? { id: String(row.id), at: Number(row.recorded_at), validFrom: Number(row.valid_from ?? row.recorded_at) } : undefined;
}

/**
 * A value that arrives after a later one (another machine's, pulled late) goes into the history
 * where it belongs: between the value before it and the later one, leaving the current value and
 * the keyword index as they are. The ledger ends exactly as if the values had come in order.
 */
function joinHistory(db: Database, f: FactSaved, validFrom: number, next: { id: string; at: number; validFrom: number }): void {
  runSql(db, 'UPDATE facts SET superseded_at = ?, superseded_by = ?, valid_to = ? WHERE superseded_by = ? AND (recorded_at < ? OR (recorded_at = ? AND id < ?))', [f.at, f.id, validFrom, next.id, f.at, f.at, f.id]);
  insertFact(db, f, normalizeKey(f.subject), normalizeKey(f.predicate), validFrom, null, next);
}

function applyNoteAdded(db: Database, op: Operation): void {
  const n = op as NoteAdded;
  insertEntryRow(db, { ...n, at: n.at });
  if (n.file) recordDailyStat(db, n.path, n.scope, n.file, n.at);
}

function applyFactRemembered(db: Database, op: Operation): void {
  const { entry, ...fact } = op as FactRemembered;
  // One operation, one savepoint in the store: the fact and its entry land together or not at all.
  applyFactSaved(db, { ...fact, op: 'memory.fact.saved' });
  applyNoteAdded(db, { ...entry, op: 'memory.note.added', at: fact.at });
}

function lastRowId(db: Database): number {
  return Number(queryScalar(db, 'SELECT last_insert_rowid()'));
}

export const memoryModule: StoreModule = {
  name: 'memory',
  migrations: MIGRATIONS,
  appliers: {
    'memory.fact.saved': applyFactSaved,
    'memory.note.added': applyNoteAdded,
    'memory.fact.remembered': applyFactRemembered,
    ...vaultAppliers,
    ...semanticAppliers,
  },
};
