import { queryRows, type Database } from '../store/sqlite';
import { phrasesOfMatch, snippetsOf } from './snippet';

/**
 * What an excerpt costs, measured on the 1 GB lcm bench store (50 shown texts of up to 4,000
 * characters; ns): building it in JavaScript, ~7–12 per character of the shown texts; SQLite's
 * snippet() pass, a fixed ~50 µs for its statement and MATCH cursor, ~3 per character (it reads
 * the hit positions from the doclist and tokenizes only up to the fragment) and ~150 per match
 * of a one-word query, whose doclist it walks again to reach the shown rows. With several
 * words (or a phrase of several) it walks each word's whole doclist, which the caller does not
 * know (it knows only how many rows hold them all): "mcp readme", 76 such rows, took 2.5 ms
 * there against 0.6 ms in JavaScript, "npm run dev" 2.3 ms against 0.06. JavaScript wins unless
 * the shown texts are long (tool outputs) and the query is one word that matches few rows.
 */
const JS_NS_PER_CHAR = 10;
const SQLITE_NS_FIXED = 50_000;
const SQLITE_NS_PER_CHAR = 3;
const SQLITE_NS_PER_MATCH = 150;

export function sqliteIsCheaper(chars: number, matchCount: number | undefined, words = 1): boolean {
  if (matchCount === undefined || words > 1) return false;
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
  const phrases = phrasesOfMatch(match);
  const words = phrases.reduce((n, p) => n + p.tokens.length, 0);
  if (texts.size && sqliteIsCheaper(chars, matchCount, words)) return sqliteSnippets(db, table, match, [...texts.keys()], size);
  const out = new Map<number, string>();
  const snippetOf = snippetsOf(phrases, size);
  for (const [docid, text] of texts) out.set(docid, text ? snippetOf(text) : '');
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
