import { Conditions, type Database, type SqlValue } from '../store/sqlite';
import { withCachedStatement } from '../store/statementCache';
import { readByDocid } from './contentColumns';
import { corpusStats, statColumns, statsFromDocTotals, statsFromPhraseStats } from './corpusStats';
import { decodeLengths, heldLengths, noteJoinedRows } from './docLengths';
import { parseIntList } from './intList';
import { parseMatchQuery } from './matchQuery';
import { bm25, idf, sortValue, topK, type Ranked, type SearchSort } from './rank';

export { excerptsOf, snippets } from './excerpts';

/**
 * Every searchable aggregate keeps one FTS4 table with this layout, so one scorer serves all:
 * column 0 `terms` is the only indexed column and holds the text's index terms as the analyzer
 * spells them (src/core/text/analyzer.ts: folded, stemmed, CJK in pairs, joined by spaces, so
 * FTS4's `simple` tokenizer splits exactly at its terms); `body` is the original text, stored
 * but not indexed, which excerpts read; `created_at` (epoch ms) and `scope` are stored but not
 * indexed; further columns are the aggregate's own references. A row's length (matchinfo 'l',
 * %_docsize) is thus its count of analyzed terms, as the query's terms are counted. searchFts
 * reads the table's %_docsize and %_stat shadow tables directly, so it must stay plain fts4
 * (no matchinfo=fts3, which drops them). With `content`, the table is FTS4 external content:
 * the stored columns are not kept a second time but read from that table or view, which must
 * have a column of each name and a `rowid` column (a view's own `rowid`) holding the docid.
 */
export function createFtsTableSql(table: string, extraColumns: readonly string[] = [], content?: string): string {
  const cols = ['terms', 'body', 'created_at', 'scope', ...extraColumns];
  const notIndexed = cols.slice(1).map((c) => `notindexed=${c}`);
  const options = content === undefined ? [] : [`content=${JSON.stringify(content)}`];
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts4(${[...options, ...cols, ...notIndexed, 'tokenize=simple'].join(', ')});`;
}

/** The terms column's value for a text: what every writer of an FTS table stores beside the body. */
export { analyze as indexTerms } from '../text/analyzer';

export interface SearchRequest {
  query: string;
  limit: number;
  sort?: SearchSort;
  scope?: string;
  /** Epoch ms bounds on created_at: since inclusive, before exclusive. */
  since?: number;
  before?: number;
  now: number;
  /** Equality on the table's own extra columns (lcm_grep: session_id); names are checked, values bound. */
  filters?: Readonly<Record<string, SqlValue>>;
  /**
   * Any phrase may match instead of every one (OR), each pair of a CJK run on its own; BM25 sums
   * what each match holds, so holding more ranks higher (chapters_rules, chapters_search's
   * fallback, the partial matches of searchWithPartial).
   */
  anyPhrase?: boolean;
  /** An already analyzed MATCH expression (parseMatchQuery's phrases) searched instead of `query`'s: terms are not analyzed twice. */
  match?: string;
  /** Only rows from this docid on: FTS4 applies it while walking the doclists (get_context ranks only the newest matches of a word most rows hold). */
  minDocid?: number;
  /**
   * The table's columns to read for the hits returned (search_text: body, ref, scope), in the
   * statement that reads created_at for the rows that can reach the top k when it can: each
   * statement costs sql.js a fixed ~0.05 ms, as much as the whole search on a rare word.
   */
  columns?: readonly string[];
  /**
   * Each phrase's document count over the whole table, in the MATCH expression's order, exactly as
   * matchinfo 'x' reports it for column 0 (queryPruning's counts, read for the same store
   * version): the matching pass then asks only 'y' of each row. Gathering 'x' there costs
   * ~0.6 µs a row on an any-word match (877 rows of "void" OR "point": ~1.3 → ~0.8 ms).
   */
  docsWithPhrase?: readonly number[] | undefined;
}

export type HitRow = Record<string, SqlValue>;

export type SearchOutcome =
  | {
      ok: true;
      hits: Ranked[];
      total: number;
      match: string;
      rows?: ReadonlyMap<number, HitRow>;
      /** anyPhrase: how many of the matches hold every phrase (each phrase's 'y' above 0). */
      holdingEvery?: number;
    }
  | { ok: false; reason: string };

/** Rows picked for created_at beyond this many over the limit (ties on a common word) read their columns only once shown. */
const EXTRA_ROWS_READ = 20;

/**
 * Full-text search with BM25 computed from matchinfo. sql.js has FTS4 but not FTS5, and a
 * JavaScript scoring callback per row costs more than the search itself, so SQLite hands
 * back every match in one pass as packed aggregates — the docids as text, the raw matchinfo
 * 'y' blobs and the %_docsize records each concatenated into one binary blob, and (only when
 * needed) created_at — and the scoring runs in one JavaScript loop over a Uint32Array.
 *
 * What each match costs is what decides the speed on common words (tens of thousands of
 * matches), measured on a 100k-message store:
 * - reading created_at is a lookup in the content table per row, most of the time of a search
 *   when done for every match; relevance order only needs it to break ties, so it is read
 *   for the rows that can still reach the top k, after scoring;
 * - a MATERIALIZED CTE copies every row into a temporary table: a subquery ordered by docid
 *   (the order FTS4 returns anyway) runs as a co-routine instead, which still keeps matchinfo
 *   out of the aggregate (where SQLite refuses to run it);
 * - matchinfo 'l' runs a statement per row to read %_docsize; a join on %_docsize reads the
 *   same records for about half the cost;
 * - hex() and string splitting cost more than the scoring: the blobs are concatenated as-is;
 * - for a one-phrase query without filters the corpus statistics come from the FTS4 %_stat
 *   row and the match count (the same numbers matchinfo 'n', 'a' and 'x' report), which saves
 *   a second pass over the doclist.
 *
 * Measured on the 1 GB history store (460k events, every page already in memory), where the
 * matching statement is ~75% of a search: for "chatbot ui" (8,010 matches) the bare count(*)
 * MATCH is ~1.5 ms, with matchinfo 'y' and the packed docids ~4.6, with the %_docsize join
 * ~7.6, with the folded 'pcxy' ~11; for "ollama" (15,535) ~1.0, ~5.7, ~10.6. So:
 * - 'x' costs ~0.4 µs a row, ~3.5 ms on "chatbot ui", where a separate 'pcx' statement costs
 *   ~1.6 ms; on "mcp readme" (76 matches) folding costs ~1.0 ms and the separate statement ~1.6.
 *   Which wins depends on a match count known only afterwards; asking 'x' of a few rows only (a
 *   CASE on docid) still costs ~2.3 ms, and a column filter (body:word) changes nothing: the
 *   fold stays.
 * - the %_docsize join (~0.3 µs a row) has no cheaper form in SQL: a correlated subquery or 'l'
 *   cost more, an inner join the same. Skipping it for rows that cannot reach the top k (BM25
 *   with the shortest possible length as a bound) prunes nothing on such queries: copies of
 *   short messages tie at the top, and every row's bound reaches the cut. So a connection whose
 *   searches of a table have joined half its rows holds every length in memory (docLengths.ts),
 *   and the statement drops the join: "chatbot ui" ~11.2 → ~8.8 ms, "ollama" ~12.5 → ~6.5.
 * - the rows tied at the cut (933 and 1,810 there) are read in one statement whose docids go in
 *   as one JSON array (readByDocid).
 */
export function searchFts(db: Database, table: string, req: SearchRequest): SearchOutcome {
  const strict = req.match === undefined ? parseMatchQuery(req.query) : { match: req.match, anyMatch: req.match };
  if (!strict) return { ok: false, reason: `query "${req.query.slice(0, 80)}" has no searchable words (letters or digits)` };
  const parsed = { match: req.anyPhrase ? strict.anyMatch : strict.match };

  const where = new Conditions(`${table} MATCH ?`, parsed.match)
    .addIf(req.scope, 'scope = ?')
    .addIf(req.since, 'created_at >= ?')
    .addIf(req.before, 'created_at < ?')
    .addIf(req.minDocid, 'docid >= ?');
  for (const [column, value] of Object.entries(req.filters ?? {})) {
    if (!isColumnName(column)) throw new Error(`search filter "${column}" is not a column name`);
    where.add(`${column} = ?`, value);
  }
  const columns = req.columns ?? [];
  for (const column of columns) if (!isColumnName(column)) throw new Error(`search column "${column}" is not a column name`);
  const sort = req.sort ?? 'relevance';
  // With a filter the content row is read anyway, so created_at comes along for free.
  const filtered = where.clauses.length > 1;
  const withTimes = sort !== 'relevance' || filtered;
  // Several phrases need each one's document count ('x'): the matching pass gathers it from the
  // doclists it has already loaded, where a statement of its own would load them all again. A
  // docid bound is left to that separate statement, which sees the whole table.
  const phrases = parsed.match.match(/"[^"]*"/g)?.length ?? 0;
  const known = req.docsWithPhrase?.length === phrases ? req.docsWithPhrase : undefined;
  const held = heldLengths(db, table);
  const packed = fetchMatches(db, table, where.sql, where.params, withTimes, phrases > 1 && req.minDocid === undefined && !known, !held);
  const none = () => ({ ok: true as const, hits: [], total: 0, match: parsed.match, ...(req.columns ? { rows: new Map<number, HitRow>() } : {}) });
  if (!packed) return none();

  const { docids, mi, sizes, docTotals, createdAt, phraseStats } = packed;
  const count = docids.length;
  // Each row holds only its 'y' (p × c values): the folded pass sends p and c once, before 'x';
  // otherwise c is the %_stat totals' column count and p what each row's share then holds, as
  // FTS4 counted them ('pc' on every row added 8 bytes a match: ~5% of the matching pass on the
  // 100k-message bench store, CPU time on a shared machine).
  const cols = phraseStats ? (phraseStats[1] as number) : docTotals ? statColumns(docTotals) : 0; // 'c' (FTS4 writes the totals row with its first row)
  const phraseCount = phraseStats ? (phraseStats[0] as number) : cols ? mi.length / count / cols : 0; // 'p'
  if (!cols || !Number.isInteger(phraseCount) || phraseCount < 1) throw new Error(`matchinfo for ${table} has ${mi.length} values for ${count} rows of ${cols} columns`);
  const stride = phraseCount * cols; // y × p × c
  if (mi.length !== count * stride) throw new Error(`matchinfo for ${table} has ${mi.length} values, expected ${count} × ${stride}`);
  const docLengths = held ? lengthsByDocid(held, docids, table) : decodeLengths(sizes, count, cols);
  if (!docLengths) throw new Error(`${table}_docsize records do not line up with the matches`);

  if (known && known.length !== phraseCount) throw new Error(`matchinfo for ${table} has ${phraseCount} phrases, ${known.length} document counts were given`);
  const stats =
    (phraseCount === 1 && !filtered && docTotals ? statsFromDocTotals(docTotals, cols, count) : undefined) ??
    (known && docTotals ? statsWithCounts(docTotals, cols, known) : undefined) ??
    (phraseStats && docTotals ? statsFromPhraseStats(docTotals, phraseStats, table) : undefined) ??
    corpusStats(db, table, parsed.match);
  if (!stats) return none();
  if (!held) noteJoinedRows(db, table, count, stats.totalDocs, cols);

  const idfs = idf(stats);
  const tf = new Array<number>(phraseCount).fill(0);
  const scores = new Float64Array(count);
  let holdingEvery = 0;
  for (let i = 0, base = 0; i < count; i++, base += stride) {
    let every = 1;
    for (let p = 0; p < phraseCount; p++) {
      const y = mi[base + p * cols] as number; // 'y' for phrase p, column 0
      tf[p] = y;
      if (!y) every = 0;
    }
    holdingEvery += every;
    scores[i] = bm25(tf, docLengths[i] as number, idfs, stats.avgDocLength);
  }
  const every = req.anyPhrase ? { holdingEvery } : {};
  let ranked: Ranked[];
  let rows: Map<number, HitRow> | undefined;
  if (createdAt) {
    ranked = [];
    for (let i = 0; i < count; i++) {
      const score = scores[i] as number;
      const at = createdAt[i] as number;
      ranked.push({ docid: docids[i] as number, bm25: score, createdAt: at, score: sortValue(sort, score, at, req.now) });
    }
  } else {
    // Relevance: only rows scoring at least the k-th best score can make the top k (ties at
    // that score are decided by created_at, then docid), so only those need created_at.
    const cut = kthLargest(scores, req.limit);
    const pick: number[] = [];
    for (let i = 0; i < count; i++) if ((scores[i] as number) >= cut) pick.push(i);
    const read = pick.length <= req.limit + EXTRA_ROWS_READ ? columns : [];
    const times = new Map<number, number>();
    const picked = readRows(db, table, pick.map((i) => docids[i] as number), read, times);
    ranked = pick.map((i) => {
      const docid = docids[i] as number;
      const score = scores[i] as number;
      return { docid, bm25: score, createdAt: times.get(docid) ?? 0, score };
    });
    if (read.length) rows = picked;
  }
  const hits = topK(ranked, req.limit);
  if (!req.columns) return { ok: true, hits, total: count, match: parsed.match, ...every };
  // Rows read with created_at hold every hit; otherwise the shown hits are read now, in one statement.
  const shown = rows ?? readRows(db, table, hits.map((h) => h.docid), columns);
  return { ok: true, hits, total: count, match: parsed.match, rows: new Map(hits.map((h) => [h.docid, shown.get(h.docid) ?? {}])), ...every };
}

/** N and the average length from the %_stat doctotal row, each phrase's document count as given. */
function statsWithCounts(docTotals: Uint8Array, cols: number, counts: readonly number[]) {
  const base = statsFromDocTotals(docTotals, cols, 0);
  return base && { ...base, docsWithPhrase: [...counts] };
}

function isColumnName(name: string): boolean {
  return /^[a-z_][a-z0-9_]*$/.test(name);
}

interface Matches {
  docids: number[];
  /** Every match's matchinfo 'y', back to back. */
  mi: Uint32Array;
  /** matchinfo 'pcx' (the same for every row) when the pass gathered the phrases' statistics. */
  phraseStats?: Uint32Array | undefined;
  /** Every match's %_docsize record (one varint per column), back to back; empty when the statement did not join them. */
  sizes: Uint8Array;
  /** The %_stat doctotal record: N, each column's total token count, then their sum (varints). */
  docTotals: Uint8Array | undefined;
  createdAt?: number[] | undefined;
}

function fetchMatches(db: Database, table: string, where: string, params: SqlValue[], withTimes: boolean, withStats: boolean, withSizes: boolean): Matches | undefined {
  // ORDER BY docid (FTS4's own order, so no sort) keeps the subquery from being flattened into
  // the aggregate and runs it as a co-routine; group_concat(x, '') appends blobs byte for byte.
  // Document lengths, when the connection does not hold them (docLengths.ts), come from a join on
  // %_docsize: the same record matchinfo 'l' decodes, but 'l' runs a statement of its own per
  // row, which costs about twice as much as the join.
  // withStats asks for 'pcxy' in the one matchinfo call (two calls with different formats make
  // FTS4 rebuild its buffer on every row): 'pcx' is the same on every row, so each row keeps only
  // its 'y' (the last quarter of what follows p and c) and the last row's 'pcx' comes along as a
  // bare column of the aggregate.
  const mi = withStats ? `substr(m.mi, -((length(m.mi) - 8) / 4))` : 'm.mi';
  const sql = `SELECT count(*), group_concat(m.docid), CAST(group_concat(${mi}, '') AS BLOB), ${withSizes ? "CAST(group_concat(d.size, '') AS BLOB)" : 'NULL'},
            (SELECT value FROM ${table}_stat WHERE id = 0)${withTimes ? ', group_concat(m.created_at)' : ''}${withStats ? ', substr(m.mi, 1, 8 + 3 * ((length(m.mi) - 8) / 4))' : ''}
     FROM (SELECT docid, matchinfo(${table}, '${withStats ? 'pcxy' : 'y'}') AS mi${withTimes ? ', coalesce(created_at, 0) AS created_at' : ''}
           FROM ${table} WHERE ${where} ORDER BY docid) AS m${withSizes ? `
     LEFT JOIN ${table}_docsize AS d ON d.docid = m.docid` : ''}`;
  return withCachedStatement(db, sql, params, (stmt) => {
    if (!stmt.step()) return undefined;
    const row = stmt.get();
    const count = Number(row[0]);
    if (!count) return undefined;
    const mi = uint32s(row[2]);
    const sizes = row[3] instanceof Uint8Array ? row[3] : new Uint8Array(0);
    const docids = parseIntList(String(row[1]), count);
    const docTotals = row[4] instanceof Uint8Array ? row[4] : undefined;
    const createdAt = withTimes ? String(row[5]).split(',').map(Number) : undefined;
    if (docids.length !== count || (createdAt && createdAt.length !== count)) throw new Error(`search over ${table} returned misaligned aggregates`);
    const phraseStats = withStats ? uint32s(row[withTimes ? 6 : 5]) : undefined;
    return { docids, mi, sizes, docTotals, createdAt, phraseStats };
  });
}

/** A blob of little-endian uint32s as an array (wasm is little-endian, as is every host node runs on). */
function uint32s(value: SqlValue | undefined): Uint32Array {
  if (!(value instanceof Uint8Array)) return new Uint32Array(0);
  const bytes = value.byteOffset % 4 === 0 ? value : value.slice(); // a Uint32Array view needs 4-byte alignment
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
}

/** Each match's length from the lengths the connection holds, which cover every docid the table has. */
function lengthsByDocid(held: Uint32Array, docids: readonly number[], table: string): Uint32Array {
  const out = new Uint32Array(docids.length);
  for (let i = 0; i < docids.length; i++) {
    const docid = docids[i] as number;
    if (docid >= held.length) throw new Error(`${table}: match ${docid} lies beyond the document lengths held`);
    out[i] = held[docid] as number;
  }
  return out;
}

/** The k-th largest value (k ≥ 1), or -Infinity when there are fewer than k. */
function kthLargest(values: Float64Array, k: number): number {
  if (k < 1 || values.length < k) return -Infinity;
  // A min-heap of the k largest seen so far; its root is the answer.
  const heap = new Float64Array(k);
  let size = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (size < k) {
      let j = size++;
      heap[j] = v;
      while (j > 0) {
        const parent = (j - 1) >> 1;
        if ((heap[parent] as number) <= (heap[j] as number)) break;
        [heap[parent], heap[j]] = [heap[j] as number, heap[parent] as number];
        j = parent;
      }
    } else if (v > (heap[0] as number)) {
      heap[0] = v;
      let j = 0;
      for (;;) {
        const l = 2 * j + 1;
        const r = l + 1;
        let m = j;
        if (l < k && (heap[l] as number) < (heap[m] as number)) m = l;
        if (r < k && (heap[r] as number) < (heap[m] as number)) m = r;
        if (m === j) break;
        [heap[m], heap[j]] = [heap[j] as number, heap[m] as number];
        j = m;
      }
    }
  }
  return heap[0] as number;
}

/** The given columns of the given rows by docid, in one statement; with `times`, their created_at too. */
function readRows(db: Database, table: string, docids: readonly number[], columns: readonly string[], times?: Map<number, number>): Map<number, HitRow> {
  const out = new Map<number, HitRow>();
  if (!docids.length) return out;
  const first = times ? 2 : 1;
  readByDocid(db, table, docids, columns, times !== undefined, (values) => {
    const docid = Number(values[0]);
    if (times) times.set(docid, Number(values[1] ?? 0));
    const row: HitRow = {};
    columns.forEach((c, k) => (row[c] = values[k + first] ?? null));
    out.set(docid, row);
  });
  return out;
}
