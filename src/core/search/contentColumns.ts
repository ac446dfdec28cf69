import type { Database, SqlValue } from '../store/sqlite';
import { withCachedStatement } from '../store/statementCache';

/**
 * Reads stored columns of an FTS4 table's rows by docid from its %_content shadow table instead
 * of through the virtual table: the same values (FTS4 keeps each column there as c<i><name>,
 * keyed by docid), without the virtual table's per-row cursor, which cost about as much as the
 * read itself for the few rows a search shows (measured on the 100k-message bench store: 20–40
 * rows in ~0.05 ms instead of ~0.1 ms on a rare word, ~0.18 instead of ~0.46 ms on a common one).
 */

/**
 * What is known of where a table's stored columns live: %_content, or for an external-content
 * table whose content has a `docid` column, that table or view (history_fts: historyIndex.ts);
 * each logical column name → its column there, and the indexes on it that lead with docid, each
 * with the columns it holds.
 */
interface ContentShape {
  from: string;
  names: ReadonlyMap<string, string>;
  byDocid: { name: string; columns: ReadonlySet<string> }[];
}

/** Each table's content shape, per database (a reopened database starts afresh). */
const mapped = new WeakMap<Database, Map<string, ContentShape>>();

function pragmaRows(db: Database, sql: string): Record<string, SqlValue>[] {
  const stmt = db.prepare(sql);
  const rows: Record<string, SqlValue>[] = [];
  try {
    while (stmt.step()) rows.push(stmt.getAsObject());
  } finally {
    stmt.free();
  }
  return rows;
}

function readShape(db: Database, table: string): ContentShape {
  const names = new Map<string, string>();
  let from = `${table}_content`;
  for (const row of pragmaRows(db, `PRAGMA table_info(${from})`)) {
    const name = String(row.name);
    const m = /^c\d+(.+)$/.exec(name);
    if (m?.[1]) names.set(m[1], name);
  }
  const external = names.size ? undefined : externalContent(db, table);
  if (external) {
    const columns = new Set(pragmaRows(db, `PRAGMA table_info(${JSON.stringify(external)})`).map((r) => String(r.name)));
    if (columns.has('docid')) {
      from = JSON.stringify(external);
      for (const row of pragmaRows(db, `PRAGMA table_info(${table})`)) if (columns.has(String(row.name))) names.set(String(row.name), String(row.name));
    }
  }
  const byDocid: ContentShape['byDocid'] = [];
  for (const index of pragmaRows(db, `PRAGMA index_list(${from})`)) {
    if (Number(index.partial) !== 0) continue;
    const columns = pragmaRows(db, `PRAGMA index_info(${JSON.stringify(String(index.name))})`).map((c) => String(c.name));
    if (columns[0] === 'docid') byDocid.push({ name: String(index.name), columns: new Set(columns) });
  }
  const shape = { from, names, byDocid };
  let tables = mapped.get(db);
  if (!tables) mapped.set(db, (tables = new Map()));
  tables.set(table, shape);
  return shape;
}

/**
 * Where a column of an FTS4 table is read by docid most cheaply: its %_content table (or its
 * external content) and the name it has there, or the virtual table itself when that does not hold it.
 */
export function columnSource(db: Database, table: string, column: string): { from: string; column: string } {
  const shape = mapped.get(db)?.get(table) ?? readShape(db, table);
  const physical = shape.names.get(column);
  return physical ? { from: shape.from, column: physical } : { from: table, column };
}

/** The table or view an external-content FTS4 table reads its columns from (its `content=` option), if it is one. */
function externalContent(db: Database, table: string): string | undefined {
  const sql = pragmaRows(db, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '${table.replace(/'/g, "''")}'`)[0]?.sql;
  const m = typeof sql === 'string' ? /\bcontent\s*=\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z_][A-Za-z0-9_]*))/i.exec(sql) : null;
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

/**
 * The content table's statement for these columns, or undefined when it does not hold them all.
 * An index led by docid that holds them all is read instead of the table (SQLite itself always
 * looks a docid up in the table): its pages hold those columns only, not the text, so the rows a
 * ranking looks up at random lie in a few pages the caches keep (memorySchema.ts adds one).
 */
function contentSql(table: string, shape: ContentShape, wanted: readonly string[], marks: string): string | undefined {
  const physical = wanted.map((c) => shape.names.get(c));
  if (!physical.every((p): p is string => p !== undefined)) return undefined;
  const covering = shape.byDocid.find((i) => physical.every((p) => i.columns.has(p)));
  return `SELECT docid${physical.map((p) => `, ${p}`).join('')} FROM ${shape.from}${covering ? ` INDEXED BY ${covering.name}` : ''} WHERE docid IN (${marks})`;
}

/**
 * Runs the content table's read, or answers false when it failed before its first row: the
 * table changed shape since its names were read (a kept statement is re-prepared by SQLite at its
 * first step, so that is where it fails; a fresh one fails to compile).
 */
function readContent(db: Database, sql: string | undefined, params: SqlValue[], onRow: (values: SqlValue[]) => void): boolean {
  if (sql === undefined) return false;
  let delivered = false;
  try {
    withCachedStatement(db, sql, params, (stmt) => {
      while (stmt.step()) {
        delivered = true;
        onRow(stmt.get());
      }
    });
    return true;
  } catch (e) {
    if (delivered) throw e;
    return false;
  }
}

/**
 * The given columns (and with `withTimes`, created_at first) of the given rows, one array of
 * values per row found: [docid, (created_at,) ...columns]. Uses the virtual table when the
 * content does not hold them (an external content without a `docid` column), looking at its names afresh
 * once when what was known about them no longer fits (a table rebuilt with other columns, an
 * index dropped).
 */
export function readByDocid(db: Database, table: string, docids: readonly number[], columns: readonly string[], withTimes: boolean, onRow: (values: SqlValue[]) => void): void {
  const wanted = withTimes ? ['created_at', ...columns] : [...columns];
  // The docids go in as one JSON array, one statement however many: sql.js binds each parameter
  // through calls of its own (~10% less on the ~1,800 rows tied at a common word's cut, 1 GB store).
  const marks = 'SELECT value FROM json_each(?)';
  const known = mapped.get(db)?.get(table);
  const params = [`[${docids.join(',')}]`];
  if (known && readContent(db, contentSql(table, known, wanted, marks), params, onRow)) return;
  if (readContent(db, contentSql(table, readShape(db, table), wanted, marks), params, onRow)) return;
  withCachedStatement(db, `SELECT docid${wanted.map((c) => `, ${c}`).join('')} FROM ${table} WHERE docid IN (${marks})`, params, (stmt) => {
    while (stmt.step()) onRow(stmt.get());
  });
}
