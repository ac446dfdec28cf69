import { queryRows, type Database } from '../store/sqlite';
import { phrasesOfMatch, snippetOf } from './snippet';

/**
 * What an excerpt costs, measured on the 100k-message benchmark store and on 135 kB texts
 * (ns): building it in JavaScript, ~12 per character of the shown texts; SQLite's snippet()
 * pass, a fixed ~100 µs for its statement and MATCH cursor, ~6 per character (it reads the hit
 * positions from the doclist and tokenizes only up to the fragment) and ~300 per match of the
 * query it walks again to reach the shown rows. JavaScript wins unless the shown texts are long
 * (tool outputs) and the query matches few rows.
 */
const JS_NS_PER_CHAR = 12;
const SQLITE_NS_FIXED = 100_000;
const SQLITE_NS_PER_CHAR = 6;
const SQLITE_NS_PER_MATCH = 300;

export function sqliteIsCheaper(chars: number, matchCount: number | undefined): boolean {
  if (matchCount === undefined) return false;
  return JS_NS_PER_CHAR * chars > SQLITE_NS_FIXED + SQLITE_NS_PER_CHAR * chars + SQLITE_NS_PER_MATCH * matchCount;
}

function excerptTokens(tokens: number): number {
  return Math.max(1, Math.min(64, Math.floor(tokens)));
}

/**
 * Highlighted excerpts for the hits actually shown; computing them for every match would waste
 * the budget. SQLite's snippet() needs a MATCH cursor, which walks every match of the query
 * again to reach these few rows, so the text is read by docid and the excerpt built in
 * JavaScript by FTS4's own rules (./snippet.ts, the same output) — unless `matchCount` (the
 * search's total, when the caller knows it) says SQLite's pass is the cheaper one.
 */
export function snippets(db: Database, table: string, match: string, docids: readonly number[], tokens = 16, matchCount?: number): Map<number, string> {
  if (!docids.length) return new Map();
  const rows = queryRows(db, `SELECT docid, body FROM ${table} WHERE docid IN (${docids.map(() => '?').join(',')})`, [...docids]);
  return excerptsOf(db, table, match, new Map(rows.map((r) => [Number(r.docid), r.body === null || r.body === undefined ? '' : String(r.body)])), tokens, matchCount);
}

/**
 * The same excerpts from texts the caller already read (searchFts's `columns`), so a search
 * reads each shown row once, for its excerpt and its other fields alike.
 */
export function excerptsOf(db: Database, table: string, match: string, texts: ReadonlyMap<number, string>, tokens = 16, matchCount?: number): Map<number, string> {
  const size = excerptTokens(tokens);
  let chars = 0;
  for (const text of texts.values()) chars += text.length;
  if (texts.size && sqliteIsCheaper(chars, matchCount)) return sqliteSnippets(db, table, match, [...texts.keys()], size);
  const out = new Map<number, string>();
  const phrases = phrasesOfMatch(match);
  for (const [docid, text] of texts) out.set(docid, text ? snippetOf(text, phrases, size) : '');
  return out;
}

/** SQLite's own snippet() for these rows: the pass the JavaScript excerpts stand in for. */
export function sqliteSnippets(db: Database, table: string, match: string, docids: readonly number[], tokens = 16): Map<number, string> {
  const out = new Map<number, string>();
  if (!docids.length) return out;
  const sql = `SELECT docid, snippet(${table}, '[', ']', '…', 0, ${excerptTokens(tokens)}) AS s FROM ${table} WHERE ${table} MATCH ? AND docid IN (${docids.map(() => '?').join(',')})`;
  for (const r of queryRows(db, sql, [match, ...docids])) out.set(Number(r.docid), String(r.s));
  return out;
}
