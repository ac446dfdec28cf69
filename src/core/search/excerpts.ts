import type { Database } from '../store/sqlite';
import { readByDocid } from './contentColumns';
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

/** The original texts of these rows, read by docid from the content table (a missing or NULL body is the empty text). */
export function bodiesOf(db: Database, table: string, docids: readonly number[]): Map<number, string> {
  const out = new Map<number, string>();
  if (!docids.length) return out;
  readByDocid(db, table, docids, ['body'], false, (values) => out.set(Number(values[0]), values[1] === null || values[1] === undefined ? '' : String(values[1])));
  return out;
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
