import { queryRows, type Database } from '../store/sqlite';
import { phrasesOfMatch, snippetsOf } from './snippet';

/**
 * Excerpts are built in JavaScript by FTS4's own rules (./snippet.ts) over the original text:
 * SQLite's snippet() can only show the column it indexed, which holds the analyzed terms, not
 * the words a reader wrote; and it needs a MATCH cursor, which walks every match of the query
 * again to reach the few rows shown.
 */

function excerptTokens(tokens: number): number {
  return Math.max(1, Math.min(64, Math.floor(tokens)));
}

/** Highlighted excerpts for the hits actually shown; computing them for every match would waste the budget. */
export function snippets(db: Database, table: string, match: string, docids: readonly number[], tokens = 16): Map<number, string> {
  return excerptsOf(match, bodiesOf(db, table, docids), tokens);
}

/** The original texts of these rows (a missing or NULL body is the empty text). */
export function bodiesOf(db: Database, table: string, docids: readonly number[]): Map<number, string> {
  if (!docids.length) return new Map();
  const rows = queryRows(db, `SELECT docid, body FROM ${table} WHERE docid IN (${docids.map(() => '?').join(',')})`, [...docids]);
  return new Map(rows.map((r) => [Number(r.docid), r.body === null || r.body === undefined ? '' : String(r.body)]));
}

/**
 * The same excerpts from texts the caller already read (searchFts's `columns`), so a search
 * reads each shown row once, for its excerpt and its other fields alike.
 */
export function excerptsOf(match: string, texts: ReadonlyMap<number, string>, tokens = 16): Map<number, string> {
  const out = new Map<number, string>();
  const snippetOf = snippetsOf(phrasesOfMatch(match), excerptTokens(tokens));
  for (const [docid, text] of texts) out.set(docid, text ? snippetOf(text) : '');
  return out;
}
