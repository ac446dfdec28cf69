/**
 * The scorer as first written (commit 795537f: MATERIALIZED CTE, hex-packed matchinfo 'ly',
 * created_at for every match, a separate 'pcnax' statistics pass). Kept only as the reference:
 * the benchmark checks that src/core/search/ftsSearch.ts ranks exactly as this did, and prints
 * its time beside the current one.
 */
import { queryScalar as scalar, type Database, type SqlValue } from '../src/core/store/sqlite';
import { parseMatchQuery } from '../src/core/search/matchQuery';
import { bm25, idf, sortValue, topK, type Ranked, type SearchSort } from '../src/core/search/rank';

interface SearchRequest {
  query: string;
  limit: number;
  sort?: SearchSort;
  scope?: string;
  /** Epoch ms bounds on created_at: since inclusive, before exclusive. */
  since?: number;
  before?: number;
  now: number;
}

type SearchOutcome =
  | { ok: true; hits: Ranked[]; total: number; match: string }
  | { ok: false; reason: string };

/**
 * Full-text search with BM25 computed from matchinfo. sql.js has FTS4 but not FTS5, and a
 * JavaScript scoring callback per row costs more than the search itself, so SQLite hands
 * back every match's term frequencies in one packed string and the scoring runs in one
 * JavaScript loop. Corpus statistics (N, average length, document frequencies) are read once.
 */
export function referenceSearchFts(db: Database, table: string, req: SearchRequest): SearchOutcome {
  const parsed = parseMatchQuery(req.query);
  if (!parsed) return { ok: false, reason: `query "${req.query.slice(0, 80)}" has no searchable words (letters or digits)` };

  const stats = corpusStats(db, table, parsed.match);
  if (!stats) return { ok: true, hits: [], total: 0, match: parsed.match };

  const filters: string[] = [];
  const params: SqlValue[] = [parsed.match];
  if (req.scope !== undefined) {
    filters.push('scope = ?');
    params.push(req.scope);
  }
  if (req.since !== undefined) {
    filters.push('created_at >= ?');
    params.push(req.since);
  }
  if (req.before !== undefined) {
    filters.push('created_at < ?');
    params.push(req.before);
  }
  const where = [`${table} MATCH ?`, ...filters].join(' AND ');
  // matchinfo cannot run inside an aggregate, so the CTE is materialised first.
  const packed = scalar(
    db,
    `WITH m AS MATERIALIZED (SELECT docid, created_at, matchinfo(${table}, 'ly') AS mi FROM ${table} WHERE ${where})
     SELECT group_concat(docid || ',' || created_at || ',' || hex(mi), ';') FROM m`,
    params,
  );
  if (typeof packed !== 'string' || !packed) return { ok: true, hits: [], total: 0, match: parsed.match };

  const sort = req.sort ?? 'relevance';
  const idfs = idf(stats);
  const phraseCount = idfs.length;
  const cols = stats.columns;
  const tf = new Array<number>(phraseCount).fill(0);
  const ranked: Ranked[] = [];
  for (const row of packed.split(';')) {
    const c1 = row.indexOf(',');
    const c2 = row.indexOf(',', c1 + 1);
    const docid = Number(row.slice(0, c1));
    const createdAt = Number(row.slice(c1 + 1, c2));
    const hex = c2 + 1;
    const docLength = readInt(row, hex, 0); // 'l' for column 0 (body)
    for (let p = 0; p < phraseCount; p++) tf[p] = readInt(row, hex, cols + p * cols); // 'y' for phrase p, column 0
    const score = bm25(tf, docLength, idfs, stats.avgDocLength);
    ranked.push({ docid, bm25: score, createdAt, score: sortValue(sort, score, createdAt, req.now) });
  }
  return { ok: true, hits: topK(ranked, req.limit), total: ranked.length, match: parsed.match };
}

interface Stats {
  totalDocs: number;
  avgDocLength: number;
  docsWithPhrase: number[];
  columns: number;
}

function corpusStats(db: Database, table: string, match: string): Stats | undefined {
  const hex = scalar(db, `SELECT hex(matchinfo(${table}, 'pcnax')) FROM ${table} WHERE ${table} MATCH ? LIMIT 1`, [match]);
  if (typeof hex !== 'string') return undefined;
  const p = readInt(hex, 0, 0);
  const c = readInt(hex, 0, 1);
  const n = readInt(hex, 0, 2);
  const avg = readInt(hex, 0, 3); // 'a' for column 0
  const xStart = 3 + c;
  const docsWithPhrase: number[] = [];
  for (let i = 0; i < p; i++) docsWithPhrase.push(readInt(hex, 0, xStart + 3 * (i * c) + 2));
  return { totalDocs: n, avgDocLength: avg, docsWithPhrase, columns: c };
}

/** Reads the `index`-th little-endian uint32 of a hex string starting at `start` (wasm is little-endian). */
function readInt(s: string, start: number, index: number): number {
  const at = start + index * 8;
  return (
    (hexByte(s, at) | (hexByte(s, at + 2) << 8) | (hexByte(s, at + 4) << 16) | (hexByte(s, at + 6) << 24)) >>> 0
  );
}

function hexByte(s: string, at: number): number {
  return (hexDigit(s.charCodeAt(at)) << 4) | hexDigit(s.charCodeAt(at + 1));
}

function hexDigit(c: number): number {
  return c <= 57 ? c - 48 : c - 55; // '0'-'9' then 'A'-'F' (SQLite's hex() is upper case)
}
