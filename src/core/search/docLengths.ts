import { queryRows, queryScalar, type Database, type SqlValue } from '../store/sqlite';
import { withCachedStatement } from '../store/statementCache';
import { FtsVarints } from './ftsVarints';
import { parseIntList } from './intList';

/**
 * Every document's body length (column 0's token count from %_docsize, what matchinfo 'l'
 * reports) of an FTS4 table, held in memory for the connection, so the matching statement need
 * not join %_docsize: a seek per match, ~0.35 µs a row, a third of a search on a common word.
 *
 * Exact by construction, not by guess: temporary triggers on the connection record the docid of
 * every %_docsize row deleted or updated, which is how FTS4 changes a document in place (history
 * events are indexed again under their own docid: delete, then insert); before each use those
 * rows are read again, as are rows appended above the highest docid held. Appends, most of what
 * an import writes, fire nothing: an insert trigger on an FTS4 shadow table cost ~14 µs a row,
 * twice what indexing a short row costs, whatever the trigger did. Every write reaches this
 * in-memory database through this one connection, other processes' too (the journal catch-up
 * replays them here), so no change escapes the triggers. The bookkeeping lives in temporary
 * tables, which a rolled-back transaction, a reopened connection or a dropped table can take
 * away or turn back: a version number that each catch-up raises notices it, and the lengths are
 * then dropped, never guessed.
 *
 * Loading reads the whole table once (~80–120 ms for the 1 GB bench store's 460k rows when its
 * pages are in memory, ~300 ms on first touch of the compressed store), so a table's lengths
 * are loaded only once its searches have joined half as many rows as it holds, and then by the
 * search after: a process answering one call (the CLI) never pays for it, a long-lived one (the
 * MCP server, the extension host) pays once what its searches would otherwise spend again and
 * again.
 */

/** The rows searches must have joined, as a share of the table's documents, before the lengths are loaded. */
export const LOAD_AFTER_SHARE = 0.5;

/** Docids this far beyond the row count (explicit docids, mass deletes) would make the array mostly holes: no lengths then. */
const MAX_HOLES = 4;
const MAX_SLACK = 65_536;

const STATE = 'temp.recollect_doc_lengths';
const CHANGED = 'temp.recollect_doc_lengths_changed';
const TRIGGERS = ['delete', 'update'] as const;

interface Held {
  lengths: Uint32Array;
  /** Every docid up to this one is held (a missing one has no row). */
  maxDocid: number;
  /** The state row's version when this process last wrote it: anything else means it was turned back. */
  version: number;
  /** Varints in each %_docsize record: one per column. */
  columns: number;
}

interface TableLengths {
  held?: Held | undefined;
  joinedRows: number;
  /** Set once the join has cost enough: the next search loads the lengths, so a process that answers one call and exits never does. */
  due?: { totalDocs: number; columns: number } | undefined;
}

const byConnection = new WeakMap<Database, Map<string, TableLengths>>();

function stateOf(db: Database, table: string): TableLengths {
  let tables = byConnection.get(db);
  if (!tables) byConnection.set(db, (tables = new Map()));
  let state = tables.get(table);
  if (!state) tables.set(table, (state = { joinedRows: 0 }));
  return state;
}

/**
 * The table's lengths indexed by docid, exact as of now, or undefined when they are not held
 * (the caller then joins %_docsize, and tells `noteJoinedRows`).
 */
export function heldLengths(db: Database, table: string): Uint32Array | undefined {
  const state = byConnection.get(db)?.get(table);
  if (state?.due && !state.held) {
    state.held = load(db, table, state.due.totalDocs, state.due.columns);
    state.due = undefined;
    state.joinedRows = 0;
    return state.held?.lengths; // exact: read just now, under the triggers
  }
  const held = state?.held;
  if (!state || !held) return undefined;
  const now = readState(db, table);
  const intact = now && now.version === held.version && now.maxDocid === held.maxDocid && now.triggers === TRIGGERS.length;
  if (intact && !now.changed && now.tableMax <= held.maxDocid) return held.lengths; // nothing written since: nothing to read, nothing to record
  // Past half the table changed, reading it whole costs less than row by row.
  if (!intact || now.changed * 2 > held.lengths.length || !catchUp(db, table, held, now.tableMax, now.changed > 0)) {
    release(db, table, state); // searches join again, and may load afresh
    return undefined;
  }
  return held.lengths;
}

/** Drops the lengths and the triggers that kept them, so writes stop paying for a record no one reads. */
function release(db: Database, table: string, state: TableLengths): void {
  state.held = undefined;
  state.due = undefined;
  state.joinedRows = 0;
  try {
    db.exec(
      `${TRIGGERS.map((t) => `DROP TRIGGER IF EXISTS temp.recollect_doc_lengths_${table}_${t};`).join(' ')}
       DELETE FROM ${CHANGED} WHERE tbl = '${table}'; DELETE FROM ${STATE} WHERE tbl = '${table}';`,
    );
  } catch {
    // The temporary tables are already gone with the connection or the transaction that made them.
  }
}

/** Counts rows a search read lengths for through the join; once that has cost more than loading them, the next search loads them. */
export function noteJoinedRows(db: Database, table: string, rows: number, totalDocs: number, columns: number): void {
  const state = stateOf(db, table);
  state.joinedRows += rows;
  if (!state.held && state.joinedRows >= totalDocs * LOAD_AFTER_SHARE) state.due = { totalDocs, columns };
}

/** Drops what is held for the table and its triggers, as if no search had run (the bench times the join this way). */
export function forgetLengths(db: Database, table: string): void {
  const state = byConnection.get(db)?.get(table);
  if (state) release(db, table, state);
  byConnection.get(db)?.delete(table);
}

function load(db: Database, table: string, totalDocs: number, columns: number): Held | undefined {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`FTS table name "${table}" is not a plain name`);
  const maxDocid = Number(queryScalar(db, `SELECT coalesce(max(docid), -1) FROM main.${table}_docsize`));
  if (maxDocid > totalDocs * MAX_HOLES + MAX_SLACK) return undefined;
  const record = (docid: string) => `INSERT OR IGNORE INTO ${CHANGED} VALUES ('${table}', ${docid})`;
  // The triggers first, then the rows: a change from here on is either recorded or read.
  db.exec(
    `CREATE TEMP TABLE IF NOT EXISTS recollect_doc_lengths (tbl TEXT PRIMARY KEY, max_docid INTEGER NOT NULL, version INTEGER NOT NULL);
     CREATE TEMP TABLE IF NOT EXISTS recollect_doc_lengths_changed (tbl TEXT NOT NULL, docid INTEGER NOT NULL, PRIMARY KEY (tbl, docid)) WITHOUT ROWID;
     INSERT OR REPLACE INTO ${STATE} VALUES ('${table}', -1, coalesce((SELECT version FROM ${STATE} WHERE tbl = '${table}'), 0));
     DELETE FROM ${CHANGED} WHERE tbl = '${table}';
     CREATE TEMP TRIGGER IF NOT EXISTS recollect_doc_lengths_${table}_delete AFTER DELETE ON main.${table}_docsize BEGIN ${record('old.docid')}; END;
     CREATE TEMP TRIGGER IF NOT EXISTS recollect_doc_lengths_${table}_update AFTER UPDATE ON main.${table}_docsize BEGIN ${record('old.docid')}; ${record('new.docid')}; END;`,
  );
  const version = Number(queryScalar(db, `SELECT version FROM ${STATE} WHERE tbl = ?`, [table]));
  const held: Held = { lengths: new Uint32Array(maxDocid + 1), maxDocid: -1, version, columns };
  return catchUp(db, table, held, maxDocid, false) ? held : undefined;
}

/**
 * Reads the rows recorded as changed and those above what is held, up to `upTo`, into the
 * lengths; then clears the record and raises the version.
 */
function catchUp(db: Database, table: string, held: Held, upTo: number, changed: boolean): boolean {
  if (changed) {
    const rows = queryRows(db, `SELECT c.docid AS docid, d.size AS size FROM ${CHANGED} AS c LEFT JOIN main.${table}_docsize AS d ON d.docid = c.docid WHERE c.tbl = ?`, [table]);
    for (const r of rows) {
      const docid = Number(r.docid);
      if (docid > held.maxDocid) continue; // read with the appended rows below
      const length = r.size instanceof Uint8Array ? decodeLengths(r.size, 1, held.columns)?.[0] : 0; // gone again since
      if (length === undefined) return false;
      held.lengths[docid] = length;
    }
  }
  if (upTo > held.maxDocid) {
    const [row] = queryRows(db, `SELECT group_concat(docid) AS ids, CAST(group_concat(size, '') AS BLOB) AS sizes FROM main.${table}_docsize WHERE docid > ? AND docid <= ?`, [held.maxDocid, upTo]);
    const ids = typeof row?.ids === 'string' ? parseIntList(row.ids, upTo - held.maxDocid) : []; // the ids as text: group_concat costs less than a step per row
    const lengths = decodeLengths(row?.sizes instanceof Uint8Array ? row.sizes : new Uint8Array(0), ids.length, held.columns);
    if (!lengths) return false;
    if (upTo >= held.lengths.length) {
      if (upTo > held.lengths.length * MAX_HOLES + MAX_SLACK) return false;
      const grown = new Uint32Array(Math.max(upTo + 1, Math.ceil(held.lengths.length * 1.25)));
      grown.set(held.lengths);
      held.lengths = grown;
    }
    ids.forEach((docid, i) => (held.lengths[docid] = lengths[i] as number));
  }
  const maxDocid = Math.max(upTo, held.maxDocid);
  if (changed) db.run(`DELETE FROM ${CHANGED} WHERE tbl = ?`, [table]);
  db.run(`UPDATE ${STATE} SET max_docid = ?, version = ? WHERE tbl = ?`, [maxDocid, held.version + 1, table]);
  held.maxDocid = maxDocid;
  held.version++;
  return true;
}

function readState(db: Database, table: string): { maxDocid: number; version: number; tableMax: number; triggers: number; changed: number } | undefined {
  let row: SqlValue[] | undefined;
  try {
    // Every search of a held table runs this first: its statement is kept compiled.
    row = withCachedStatement(
      db,
      `SELECT max_docid, version, (SELECT coalesce(max(docid), -1) FROM main.${table}_docsize),
              (SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger' AND tbl_name = '${table}_docsize' AND name LIKE 'recollect_doc_lengths_%'),
              (SELECT count(*) FROM ${CHANGED} WHERE tbl = '${table}')
       FROM ${STATE} WHERE tbl = ?`,
      [table],
      (stmt) => (stmt.step() ? stmt.get() : undefined),
    );
  } catch {
    return undefined; // the temporary tables went with the connection or the transaction that made them
  }
  if (!row) return undefined;
  return { maxDocid: Number(row[0]), version: Number(row[1]), tableMax: Number(row[2]), triggers: Number(row[3]), changed: Number(row[4]) };
}

/**
 * Column 0's token count from each of `count` %_docsize records (FTS varints, one per column)
 * laid back to back, as matchinfo 'l' reads it; undefined when they do not line up.
 */
export function decodeLengths(sizes: Uint8Array, count: number, columns: number): Uint32Array | undefined {
  const out = new Uint32Array(count);
  const varints = new FtsVarints(sizes);
  for (let i = 0; i < count; i++) {
    for (let c = 0; c < columns; c++) {
      const v = varints.next();
      if (v < 0) return undefined;
      if (c === 0) out[i] = v;
    }
  }
  return varints.at === sizes.length ? out : undefined;
}
