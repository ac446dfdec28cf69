import { createHash } from 'node:crypto';
import type { Database, SqlValue } from '../store/sqlite';
import type { CompiledPattern } from './regexPattern';

/**
 * A gram filter over the inline events (those whose whole text is in their row), so lcm_grep's
 * regex mode reads only the events that can hold a pattern's literal. The FTS index cannot
 * narrow a literal of letters inside words (its terms are stems) and `instr` on the stored text
 * must read every row, which on a store larger than the chunk cache decompresses the whole file
 * on every call.
 *
 * Events are grouped by id into blocks of BLOCK_EVENTS; each block has a one-hash Bloom filter
 * of the trigrams and 4-grams of its inline texts' code points, case-folded (`fold`). A text
 * holding a literal holds every gram of it, case-insensitively too, since folding maps every
 * character to the same value as the characters it matches under /i: so a block whose filter
 * lacks a bit of the literal's grams holds no match, and skipping it never changes an answer.
 * The filters only ever gain bits (a text removed or replaced leaves its grams behind), which
 * costs selectivity, never a match.
 *
 * The table lives in the database, written in the same transaction as the events it covers
 * (`addInlineGrams`, called where events are written), so it is exact wherever the database
 * goes: snapshot, journal replay, compaction. Reading it whole on each call would touch pages
 * spread over the whole file (the import writes them among the events'), so each database's
 * filters are kept in memory, checked against a token that changes with the table's content
 * (`blocksHolding`), and counted in the store's memory budget by the caller (`held`).
 */

export const INLINE_GRAMS = 'lcm_inline_grams';
const BLOCK_SHIFT = 6;
export const BLOCK_EVENTS = 1 << BLOCK_SHIFT;
/**
 * The row holding the table's change token, not a block: the XOR of every block row's hash
 * (rowHash), so it is a function of the table's content alone. A rebuild from the journal, a
 * rolled-back transaction and a compaction all leave the token their content gives, and the
 * database stays the same whichever way it was reached.
 */
const TOKEN_ROW = -1;
/**
 * Filter bits per character of text when a block's filter is built (a multiple of 64, at least
 * MIN_BITS). Measured on the 200 MB bench store, a block of 64 inline events holds about 0.36
 * distinct trigrams and 0.22 distinct 4-grams per character, so half a bit per character leaves
 * filters about two thirds full: a literal of n characters (2n-5 bits) passes a block that lacks
 * it with odds of about 0.7^(2n-5), 8% for six characters. The filters then add about a tenth
 * of the inline texts' size to the store, and, being random bits, do not compress.
 */
const BITS_PER_CHAR = 0.5;
const MIN_BITS = 256;

export const INLINE_GRAMS_SQL = `CREATE TABLE IF NOT EXISTS ${INLINE_GRAMS} (block INTEGER PRIMARY KEY, chars INTEGER NOT NULL, bits BLOB NOT NULL);`;

/** What the writer needs of a statement cache (sessionApply's Statements). */
export interface GramStatements {
  run(sql: string, params: SqlValue[]): void;
  row(sql: string, params: SqlValue[]): Record<string, SqlValue> | undefined;
  rows(sql: string, params: SqlValue[]): Record<string, SqlValue>[];
}

/** The filter size for a block of `chars` characters of text. */
function bitsFor(chars: number): number {
  return Math.max(MIN_BITS, Math.ceil((chars * BITS_PER_CHAR) / 64) * 64);
}

/**
 * Keeps the filters up with events just written (new events, and new texts of existing ones;
 * `texts` lists every id written, with '' for a large event). Ids are given out one past the
 * largest, so once an id past a block exists no new event lands in it: such a block gets its
 * filter then, once, from its rows, sized for all its text. The events of the block still being
 * filled (from `upTo` on) have none yet and are always read. A text written into a block that
 * already has its filter (a rewritten text, an id used again after a removal) adds its grams to it.
 */
export function addInlineGrams(st: GramStatements, texts: readonly (readonly [number, string])[]): void {
  if (!texts.length) return;
  const tokenRow = st.row(`SELECT chars, bits FROM ${INLINE_GRAMS} WHERE block = ?`, [TOKEN_ROW]);
  const upTo = Number(tokenRow?.chars ?? 0);
  const token = tokenRow?.bits instanceof Uint8Array && tokenRow.bits.length === TOKEN_BYTES ? Uint8Array.from(tokenRow.bits) : new Uint8Array(TOKEN_BYTES);
  const byBlock = new Map<number, string[]>();
  let top = -1;
  for (const [id, text] of texts) {
    top = Math.max(top, id);
    if (id >= upTo || text.length < 3) continue; // no trigram: no literal a filter decides on can lie in it
    const b = id >> BLOCK_SHIFT;
    const list = byBlock.get(b);
    if (list) list.push(text);
    else byBlock.set(b, [text]);
  }
  for (const [block, added] of byBlock) {
    const row = st.row(`SELECT chars, bits FROM ${INLINE_GRAMS} WHERE block = ?`, [block]);
    const chars = Number(row?.chars ?? 0) + added.reduce((n, t) => n + t.length, 0);
    const old = row?.bits instanceof Uint8Array ? row.bits : undefined;
    const bits = old ? Uint8Array.from(old) : new Uint8Array(bitsFor(chars) / 8);
    for (const t of added) setGrams(bits, t);
    if (old) xorInto(token, rowHash(block, old));
    xorInto(token, rowHash(block, bits));
    st.run(UPSERT, [block, chars, bits]);
  }
  const complete = ((top + 1) >> BLOCK_SHIFT) << BLOCK_SHIFT;
  for (let lo = upTo; lo < complete; lo += BLOCK_EVENTS) writeBlock(st, lo >> BLOCK_SHIFT, token);
  st.run(UPSERT, [TOKEN_ROW, Math.max(upTo, complete), token]);
}

/** The token row's `chars` holds `upTo`: the first id of the block still being filled, whose events have no filter yet. */
const UPSERT = `INSERT INTO ${INLINE_GRAMS}(block, chars, bits) VALUES (?, ?, ?) ON CONFLICT(block) DO UPDATE SET chars = excluded.chars, bits = excluded.bits`;

/** A complete block's filter built from its rows' inline texts. */
function writeBlock(st: GramStatements, block: number, token: Uint8Array): void {
  const lo = block << BLOCK_SHIFT;
  const old = st.row(`SELECT bits FROM ${INLINE_GRAMS} WHERE block = ?`, [block])?.bits;
  const texts = st.rows('SELECT text FROM events WHERE id BETWEEN ? AND ? AND blob IS NULL', [lo, lo + BLOCK_EVENTS - 1]).map((r) => String(r.text ?? ''));
  const chars = texts.reduce((n, t) => n + t.length, 0);
  if (chars === 0) return;
  const bits = new Uint8Array(bitsFor(chars) / 8);
  for (const t of texts) setGrams(bits, t);
  if (old instanceof Uint8Array) xorInto(token, rowHash(block, old));
  xorInto(token, rowHash(block, bits));
  st.run(UPSERT, [block, chars, bits]);
}

/**
 * Builds every complete block's filter from the events (the migration that adds the table to
 * an existing store), reporting the ids done out of the largest.
 */
export function buildInlineGrams(db: Database, progress?: (done: number, total: number) => void): void {
  const top = Number(db.exec('SELECT coalesce(max(id), 0) FROM events')[0]?.values[0]?.[0] ?? 0);
  const upTo = ((top + 1) >> BLOCK_SHIFT) << BLOCK_SHIFT;
  const read = db.prepare('SELECT id, text FROM events WHERE blob IS NULL AND id < ? ORDER BY id');
  const write = db.prepare(UPSERT);
  // The migration fills an empty table, so the token is the XOR of the rows written here.
  db.run(`DELETE FROM ${INLINE_GRAMS}`);
  const token = new Uint8Array(TOKEN_BYTES);
  try {
    read.bind([upTo]);
    // A new store has no events: nothing to build, so no progress to show.
    if (top === 0) progress = undefined;
    let block = -1;
    let texts: string[] = [];
    const put = () => {
      const chars = texts.reduce((n, t) => n + t.length, 0);
      if (block < 0 || chars === 0) return;
      const bits = new Uint8Array(bitsFor(chars) / 8);
      for (const t of texts) setGrams(bits, t);
      xorInto(token, rowHash(block, bits));
      write.run([block, chars, bits]);
    };
    let lastTenth = -1;
    while (read.step()) {
      const [id, text] = read.get();
      const b = Number(id) >> BLOCK_SHIFT;
      if (b !== block) {
        put();
        block = b;
        texts = [];
        const tenth = Math.floor((Number(id) / Math.max(top, 1)) * 10);
        if (tenth > lastTenth) {
          lastTenth = tenth;
          progress?.(Number(id), top);
        }
      }
      const t = String(text ?? '');
      if (t.length >= 3) texts.push(t);
    }
    put();
    write.run([TOKEN_ROW, upTo, token]);
    progress?.(top, top);
  } finally {
    read.free();
    write.free();
  }
}

/** Each database's filters as last read, with the token they were read at. */
const loaded = new WeakMap<Database, Filters>();

interface Filters {
  token: string;
  /** The first id with no filter yet: every event from here on is a candidate. */
  upTo: number;
  blocks: Map<number, Uint8Array>;
  /** Bytes the filters hold: their bits and about 64 bytes of map entry and array header each. */
  held: number;
}

/**
 * The blocks whose filters may hold all of `keys`, the first id with no filter yet, and how
 * many blocks there are; undefined when the table is missing. Only the events of the blocks
 * listed and those from `upTo` on can be inline events that match.
 */
export function blocksHolding(db: Database, keys: GramKeys): { blocks: number[]; upTo: number; of: number; held: number } | undefined {
  const filters = filtersOf(db);
  if (!filters) return undefined;
  const blocks: number[] = [];
  for (const [block, bits] of filters.blocks) if (mayHold(bits, keys)) blocks.push(block);
  return { blocks, upTo: filters.upTo, of: filters.blocks.size, held: filters.held };
}

function filtersOf(db: Database): Filters | undefined {
  let token: string;
  let upTo: number;
  try {
    const r = db.exec(`SELECT hex(bits), chars FROM ${INLINE_GRAMS} WHERE block = ${TOKEN_ROW}`)[0]?.values[0];
    token = String(r?.[0] ?? '');
    upTo = Number(r?.[1] ?? 0);
  } catch {
    return undefined; // no table: a database this module's migration has not reached
  }
  const known = loaded.get(db);
  if (known && token && known.token === token && known.upTo === upTo) return known;
  const blocks = new Map<number, Uint8Array>();
  let held = 0;
  const stmt = db.prepare(`SELECT block, bits FROM ${INLINE_GRAMS} WHERE block >= 0`);
  try {
    while (stmt.step()) {
      const [block, bits] = stmt.get();
      if (!(bits instanceof Uint8Array)) continue;
      blocks.set(Number(block), bits);
      held += bits.byteLength + 64;
    }
  } finally {
    stmt.free();
  }
  const filters = { token, upTo, blocks, held };
  // Without a token (none written yet) nothing is kept: a later change could not be told apart.
  if (token) loaded.set(db, filters);
  return filters;
}

/** The events of `blocks`, and those from `upTo` on: a narrowing of the candidates statement. */
export function blockNarrowing(found: { blocks: readonly number[]; upTo: number }): { sql: string; params: SqlValue[] } {
  return {
    sql: `(e.id IN (SELECT (j.value << ${BLOCK_SHIFT}) + o.value FROM json_each(?) AS j, json_each(?) AS o) OR e.id >= ?)`,
    params: [JSON.stringify(found.blocks), JSON.stringify(Array.from({ length: BLOCK_EVENTS }, (_, i) => i)), found.upTo],
  };
}

/** The 32-bit hashes of the grams every matching text holds, one array per literal. */
export type GramKeys = Uint32Array[];

/**
 * The grams of the pattern's literals, or undefined when the filter cannot decide: no literal
 * of three characters, or one holding U+FFFD or a lone surrogate (sql.js reads a stored lone
 * surrogate back as U+FFFD, so the text searched is not the text the filter saw there).
 */
export function inlineGramKeys(pattern: CompiledPattern): GramKeys | undefined {
  const keys: GramKeys = [];
  for (const l of pattern.literals) {
    if (/\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(l)) return undefined;
    const hashes: number[] = [];
    forEachGram(l, (h) => hashes.push(h));
    if (hashes.length) keys.push(Uint32Array.from(hashes));
  }
  return keys.length ? keys : undefined;
}

export function mayHold(bits: Uint8Array, keys: GramKeys): boolean {
  const m = bits.length * 8;
  for (const k of keys) {
    for (let i = 0; i < k.length; i++) {
      const h = slot(k[i] as number, m);
      if (((bits[h >>> 3] as number) & (1 << (h & 7))) === 0) return false;
    }
  }
  return true;
}

function setGrams(bits: Uint8Array, text: string): void {
  const m = bits.length * 8;
  forEachGram(text, (g) => {
    const h = slot(g, m);
    bits[h >>> 3] = (bits[h >>> 3] as number) | (1 << (h & 7));
  });
}

/** A hash's bit among m: its high bits scaled, so m need not be a power of two (exact: below 2^53). */
function slot(hash: number, m: number): number {
  return Math.floor((hash * m) / 4294967296);
}

/** Calls `fn` with the hash of each trigram and 4-gram of the text's folded code points. */
export function forEachGram(text: string, fn: (hash: number) => void): void {
  const table = foldTable();
  let a = -1;
  let b = -1;
  let c = -1;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < n) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo < 0xe000) {
        cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
        i++;
      }
    }
    const d = cp < 0x10000 ? (table[cp] as number) : foldAstral(cp);
    if (b >= 0) fn(gram3(b, c, d));
    if (a >= 0) fn(gram4(a, b, c, d));
    a = b;
    b = c;
    c = d;
  }
}

function gram3(a: number, b: number, c: number): number {
  let h = Math.imul(a ^ 0x2545f491, 0x9e3779b1);
  h = Math.imul(h ^ b, 0x85ebca6b);
  h = Math.imul(h ^ c, 0xc2b2ae35);
  return Math.imul(h ^ (h >>> 15), 0x27d4eb2d) >>> 0;
}

/** A 4-gram's hash, seeded apart from the trigrams' so the two do not land together. */
function gram4(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(a ^ 0x68e31da4, 0x9e3779b1);
  h = Math.imul(h ^ b, 0x85ebca6b);
  h = Math.imul(h ^ c, 0xc2b2ae35);
  h = Math.imul(h ^ d, 0x165667b1);
  return Math.imul(h ^ (h >>> 15), 0x27d4eb2d) >>> 0;
}

/**
 * One code point for every character that case-insensitive matching treats as the same: the
 * lower case of its upper case (so ſ, s and S, or K, k and the Kelvin sign K, or σ, ς and Σ, all
 * give s, k, σ), or its lower case when its upper case is more than one character (ß gives ß,
 * as does ẞ). Folding two characters together that no pattern matches as one only costs
 * selectivity; the test checks that each of RE2's case classes folds to one value.
 */
export function fold(cp: number): number {
  const s = String.fromCodePoint(cp);
  const upper = s.toUpperCase();
  const base = [...upper].length === 1 ? upper : s;
  const lower = base.toLowerCase();
  return [...lower].length === 1 ? (lower.codePointAt(0) as number) : (base.codePointAt(0) as number);
}

let bmp: Uint32Array | undefined;

function foldTable(): Uint32Array {
  if (bmp) return bmp;
  const t = new Uint32Array(0x10000);
  for (let c = 0; c < 0x10000; c++) t[c] = c >= 0xd800 && c < 0xe000 ? c : fold(c);
  bmp = t;
  return t;
}

const astral = new Map<number, number>();

function foldAstral(cp: number): number {
  let f = astral.get(cp);
  if (f === undefined) {
    f = fold(cp);
    if (astral.size < 4096) astral.set(cp, f);
  }
  return f;
}

const TOKEN_BYTES = 16;

/** A block row's share of the change token: 16 bytes of SHA-256 over its number and its bits. */
function rowHash(block: number, bits: Uint8Array): Uint8Array {
  return createHash('sha256').update(`${block}:`).update(bits).digest().subarray(0, TOKEN_BYTES);
}

function xorInto(token: Uint8Array, hash: Uint8Array): void {
  for (let i = 0; i < TOKEN_BYTES; i++) token[i]! ^= hash[i]!;
}
