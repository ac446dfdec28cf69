import type { Database } from '../store/sqlite';
import { withCachedStatement } from '../store/statementCache';
import { FtsVarints } from './ftsVarints';

/**
 * The corpus statistics BM25 needs (N, the average body length, each phrase's document count),
 * exactly as FTS4's matchinfo 'n', 'a' and 'x' report them, from whichever source costs least:
 * the %_stat doctotal row, the matching pass's own 'pcx', or a 'pcnax' statement of their own.
 */

export interface Stats {
  totalDocs: number;
  avgDocLength: number;
  docsWithPhrase: number[];
  columns: number;
}

export function corpusStats(db: Database, table: string, match: string): Stats | undefined {
  const hex = withCachedStatement(db, `SELECT hex(matchinfo(${table}, 'pcnax')) FROM ${table} WHERE ${table} MATCH ? LIMIT 1`, [match], (stmt) => (stmt.step() ? stmt.get()[0] : undefined));
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

/**
 * Corpus statistics from the matching pass's 'pcx': N and the average length from the %_stat
 * doctotal row as for one phrase, each phrase's document count from 'x' (column 0), as the
 * separate 'pcnax' statement would report them.
 */
export function statsFromPhraseStats(docTotals: Uint8Array, pcx: Uint32Array, table: string): Stats | undefined {
  const p = pcx[0] as number;
  const c = pcx[1] as number;
  if (pcx.length !== 2 + 3 * p * c) throw new Error(`matchinfo 'pcx' for ${table} has ${pcx.length} values, expected ${2 + 3 * p * c}`);
  const base = statsFromDocTotals(docTotals, c, 0);
  if (!base) return undefined;
  const docsWithPhrase: number[] = [];
  for (let i = 0; i < p; i++) docsWithPhrase.push(pcx[2 + 3 * (i * c) + 2] as number);
  return { ...base, docsWithPhrase };
}

/**
 * Corpus statistics for a one-phrase query without filters, without a pass over the doclist:
 * N and the average length exactly as matchinfo 'n' and 'a' compute them from the %_stat
 * doctotal row, and the documents holding the phrase are the matches themselves.
 */
export function statsFromDocTotals(blob: Uint8Array, columns: number, matches: number): Stats | undefined {
  const varints = new FtsVarints(blob);
  const n = varints.next();
  const tokens = varints.next(); // column 0 (body)
  if (!(n > 0) || tokens < 0) return undefined;
  // fts3 matchinfo: (u32)(((u32)(nToken & 0xffffffff) + nDoc/2) / nDoc), in integer arithmetic.
  const avg = Math.floor(((tokens % 4294967296) + Math.floor(n / 2)) / n) >>> 0;
  return { totalDocs: n >>> 0, avgDocLength: avg, docsWithPhrase: [matches], columns };
}

/** The table's column count from its %_stat doctotal record: N, one varint per column, then the sum over all columns. */
export function statColumns(blob: Uint8Array): number {
  let varints = 0;
  for (const b of blob) if (b < 0x80) varints++;
  return Math.max(0, varints - 2);
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
