import type { Database } from 'sql.js';
import { queryRows, queryScalar } from './sqlite';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * What SQLite's VACUUM INTO does, done by hand so that its output can be a file sql.js lets us
 * page (VACUUM INTO needs an empty file, and sql.js's in-memory file system turns an empty file's
 * first write into a plain array that it grows by reallocate-and-copy, all of it in memory, with
 * no way in for paged contents): `db`'s main database, empty and of the
 * source's page size, gets every table of the database attached as `from` b-tree by b-tree, in
 * the same steps and order as sqlite3RunVacuum (tables and indexes created first, then each
 * table's rows, then the rows of sqlite_schema that own no b-tree: virtual tables, views,
 * triggers), so a table's pages and each of its indexes' pages end up contiguous.
 *
 * Rowids are kept: `INSERT INTO t SELECT * FROM src.t` is SQLite's transfer optimization, which
 * copies rows and index entries as they are, rowids included, for a table with an INTEGER
 * PRIMARY KEY or with an index; a rowid table with neither would get new rowids from it (VACUUM
 * avoids that with a flag no statement can set), so its rowids are copied by name. A table whose
 * transfer fell back to a plain insert (which would renumber) is caught by comparing its rows'
 * count and rowid sum with the source's. Triggers are copied after the rows, so none fires.
 *
 * The caller holds both databases' files and runs this inside one transaction.
 */
export function copyInTableOrder(db: Database, from: string): void {
  const src = quote(from);
  const schema = (where: string) => queryRows(db, `SELECT type, name, tbl_name, sql FROM ${src}.sqlite_schema WHERE ${where} ORDER BY rowid`);
  // sqlite_sequence is made by the first AUTOINCREMENT table's CREATE and copied last, after the
  // transfers into those tables have written their own (possibly lower) counters to it.
  for (const t of schema("type = 'table' AND name <> 'sqlite_sequence' AND coalesce(rootpage, 1) > 0")) db.exec(String(t.sql));
  for (const i of schema("type = 'index' AND sql IS NOT NULL")) db.exec(String(i.sql));
  const tables = schema("type = 'table' AND coalesce(rootpage, 1) > 0").map((t) => String(t.name));
  const ordered = [...tables.filter((t) => t !== 'sqlite_sequence'), ...tables.filter((t) => t === 'sqlite_sequence')];
  for (const table of ordered) copyTable(db, src, table);
  db.exec('PRAGMA writable_schema = ON');
  db.exec(`INSERT INTO main.sqlite_schema SELECT * FROM ${src}.sqlite_schema WHERE type IN ('view', 'trigger') OR (type = 'table' AND rootpage = 0)`);
  db.exec('PRAGMA writable_schema = OFF');
  for (const pragma of ['user_version', 'application_id']) db.exec(`PRAGMA main.${pragma} = ${Number(queryScalar(db, `PRAGMA ${src}.${pragma}`))}`);
}

function copyTable(db: Database, src: string, table: string): void {
  const name = quote(table);
  if (table === 'sqlite_sequence') db.exec('DELETE FROM main.sqlite_sequence');
  const kind = rowidKind(db, table);
  if (kind === 'bare') {
    const columns = queryRows(db, `PRAGMA main.table_info(${name})`).map((c) => quote(String(c.name)));
    db.exec(`INSERT INTO main.${name}(rowid, ${columns.join(', ')}) SELECT rowid, ${columns.join(', ')} FROM ${src}.${name} ORDER BY rowid`);
    return;
  }
  db.exec(`INSERT INTO main.${name} SELECT * FROM ${src}.${name}`);
  if (kind !== 'indexed') return;
  const [copied, source] = [`main.${name}`, `${src}.${name}`].map((t) => JSON.stringify(db.exec(`SELECT count(*), total(rowid) FROM ${t}`)[0]?.values));
  if (copied !== source) throw new Error(`the copy of table ${table} did not keep its rowids (${copied} rows and rowid sum, the source has ${source})`);
}

/**
 * 'alias': the rowid is an INTEGER PRIMARY KEY (or there is no rowid), so any copy keeps it;
 * 'indexed': a rowid table without one but with an index, whose transfer keeps rowids;
 * 'bare': neither, whose rowids must be copied by name.
 */
function rowidKind(db: Database, table: string): 'alias' | 'indexed' | 'bare' {
  const name = quote(table);
  try {
    db.prepare(`SELECT rowid FROM main.${name} LIMIT 0`).free();
  } catch {
    return 'alias'; // WITHOUT ROWID
  }
  const pk = queryRows(db, `PRAGMA main.table_info(${name})`).filter((c) => Number(c.pk) > 0);
  if (pk.length === 1 && String(pk[0]?.type).toUpperCase() === 'INTEGER' && !/PRIMARY\s+KEY\s+DESC/i.test(String(queryScalar(db, 'SELECT sql FROM main.sqlite_schema WHERE name = ?', [table]) ?? ''))) return 'alias';
  return Number(queryScalar(db, "SELECT count(*) FROM main.sqlite_schema WHERE type = 'index' AND tbl_name = ?", [table])) > 0 ? 'indexed' : 'bare';
}
