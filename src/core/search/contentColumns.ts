import type { Database, SqlValue, Statement } from '../store/sqlite';

/**
 * Reads stored columns of an FTS4 table's rows by docid from its %_content shadow table instead
 * of through the virtual table: the same values (FTS4 keeps each column there as c<i><name>,
 * keyed by docid), without the virtual table's per-row cursor, which cost about as much as the
 * read itself for the few rows a search shows (measured on the 100k-message bench store: 20–40
 * rows in ~0.05 ms instead of ~0.1 ms on a rare word, ~0.18 instead of ~0.46 ms on a common one).
 */

/** Each table's logical column name → its %_content column, per database (a reopened database starts afresh). */
const mapped = new WeakMap<Database, Map<string, ReadonlyMap<string, string>>>();

function readNames(db: Database, table: string): ReadonlyMap<string, string> {
  const names = new Map<string, string>();
  const stmt = db.prepare(`PRAGMA table_info(${table}_content)`);
  try {
    while (stmt.step()) {
      const name = String(stmt.getAsObject().name);
      const m = /^c\d+(.+)$/.exec(name);
      if (m?.[1]) names.set(m[1], name);
    }
  } finally {
    stmt.free();
  }
  let tables = mapped.get(db);
  if (!tables) mapped.set(db, (tables = new Map()));
  tables.set(table, names);
  return names;
}

/**
 * Where a column of an FTS4 table is read by docid most cheaply: its %_content table and the
 * name it has there, or the virtual table itself when the content table does not hold it.
 */
export function columnSource(db: Database, table: string, column: string): { from: string; column: string } {
  const physical = (mapped.get(db)?.get(table) ?? readNames(db, table)).get(column);
  return physical ? { from: `${table}_content`, column: physical } : { from: table, column };
}

/** The content table's statement for these columns, or undefined when it does not hold them all. */
function prepareContent(db: Database, table: string, names: ReadonlyMap<string, string>, wanted: readonly string[], marks: string): Statement | undefined {
  const physical = wanted.map((c) => names.get(c));
  if (!physical.every((p): p is string => p !== undefined)) return undefined;
  try {
    return db.prepare(`SELECT docid${physical.map((p) => `, ${p}`).join('')} FROM ${table}_content WHERE docid IN (${marks})`);
  } catch {
    return undefined; // the table changed shape since its names were read
  }
}

/**
 * The given columns (and with `withTimes`, created_at first) of the given rows, one array of
 * values per row found: [docid, (created_at,) ...columns]. Uses the virtual table when the
 * content table does not hold them (an external-content table), looking at its names afresh
 * once when what was known about them no longer fits (a table rebuilt with other columns).
 */
export function readByDocid(db: Database, table: string, docids: readonly number[], columns: readonly string[], withTimes: boolean, onRow: (values: SqlValue[]) => void): void {
  const wanted = withTimes ? ['created_at', ...columns] : [...columns];
  // The docids go in as one JSON array, one statement however many: sql.js binds each parameter
  // through calls of its own (~10% less on the ~1,800 rows tied at a common word's cut, 1 GB store).
  const marks = 'SELECT value FROM json_each(?)';
  const known = mapped.get(db)?.get(table);
  const stmt =
    (known && prepareContent(db, table, known, wanted, marks)) ??
    prepareContent(db, table, readNames(db, table), wanted, marks) ??
    db.prepare(`SELECT docid${wanted.map((c) => `, ${c}`).join('')} FROM ${table} WHERE docid IN (${marks})`);
  try {
    stmt.bind([`[${docids.join(',')}]`]);
    while (stmt.step()) onRow(stmt.get());
  } finally {
    stmt.free();
  }
}
