import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { mergePairs } from './pairMerge';

let encoder: Tiktoken | undefined;

/** The two tables js-tiktoken 1.0.21 encodes and decodes with (fields its types call internal). */
interface RankTables {
  rankMap: Map<string, number>;
  textMap: Map<number, Uint8Array>;
}

/**
 * The o200k encoder, its tables filled here rather than by the library's constructor: that one
 * builds an object with 200k keys, decodes base64 in JavaScript and then fills the maps; Node's
 * native base64 straight into the maps builds the same tables in half the time (fresh process,
 * median of 7: 629 → 309 ms). The tables are the library's own format (bytes joined by commas → rank, rank → bytes),
 * so encode and decode are the library's unchanged; a test compares both tables entry for entry
 * with the constructor's, so a js-tiktoken upgrade that changes them fails loudly. Should the
 * fields be gone, the library builds them itself.
 *
 * Only the rank table is filled here: counting needs no other, and the table back from rank to
 * bytes (200k small arrays, about 25 MB of heap) is filled by `withDecodeTable` the first time
 * text is cut, so a process that only counts (an import building its summary DAG) never holds it.
 */
export function buildEncoder(): Tiktoken {
  const built = new Tiktoken({ ...o200k, bpe_ranks: '' });
  const tables = built as unknown as Partial<RankTables>;
  if (!(tables.rankMap instanceof Map) || !(tables.textMap instanceof Map) || tables.rankMap.size !== 0) return new Tiktoken(o200k);
  const { rankMap } = tables as RankTables;
  eachToken((bytes, rank) => rankMap.set(bytes.join(','), rank));
  return built;
}

/** Fills the encoder's table from rank to bytes, if `buildEncoder` left it empty; returns the encoder. */
export function withDecodeTable(built: Tiktoken): Tiktoken {
  const tables = built as unknown as Partial<RankTables>;
  if (tables.textMap instanceof Map && tables.textMap.size === 0) {
    const textMap = tables.textMap;
    eachToken((bytes, rank) => textMap.set(rank, bytes));
  }
  return built;
}

function eachToken(visit: (bytes: Uint8Array, rank: number) => void): void {
  // Each line: "! <first rank> <base64 token> <base64 token> ...", ranks consecutive.
  for (const line of o200k.bpe_ranks.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    let rank = Number.parseInt(fields[1] ?? '', 10);
    for (let i = 2; i < fields.length; i++, rank++) {
      const decoded = Buffer.from(fields[i] ?? '', 'base64');
      visit(new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.length), rank);
    }
  }
}

/**
 * Building the o200k tables takes ~300 ms; long-lived processes (the extension host, the MCP
 * server) call this once they are idle after start, so no tool call pays for it.
 */
export function warmTokenizer(delayMs = 0): void {
  setTimeout(() => {
    encoder ??= buildEncoder();
  }, delayMs).unref();
}

/**
 * Token counts from a real BPE tokenizer (o200k, the GPT-4o family's), because budgets that
 * a model reads must be in the unit the model pays in, not characters ÷ 4.
 */
export function countTokens(text: string): number {
  encoder ??= buildEncoder();
  const ranks = (encoder as unknown as Partial<RankTables>).rankMap;
  if (!(ranks instanceof Map)) return encoder.encode(text, [], []).length;
  let n = 0;
  for (const match of text.matchAll(PIECES)) {
    const piece = match[0];
    const known = pieceCounts.get(piece);
    if (known !== undefined) {
      n += known;
      continue;
    }
    const bytes = UTF8.encode(piece);
    const count = tokensOfBytes(bytes, ranks).length;
    if (piece.length <= MEMO_PIECE_CHARS) {
      if (pieceCounts.size >= MEMO_PIECES) pieceCounts.clear();
      // The key is a fresh string made from the bytes: the piece itself can be a slice that keeps
      // the whole text it came from alive. (A lone surrogate comes back as U+FFFD, whose bytes,
      // and so whose tokens, are the same.)
      pieceCounts.set(FROM_UTF8.decode(bytes), count);
    }
    n += count;
  }
  return n;
}

/**
 * Tokens per piece, remembered: a piece's tokens depend on its text alone (the tables never
 * change), so a remembered count is exact. Text repeats its words, and the summary DAG counts
 * every large tool output of an import (most of its time went to merging the same pieces
 * again); short pieces only, at most MEMO_PIECES of them (about 6 MB), dropped all at once when full.
 */
const pieceCounts = new Map<string, number>();
const MEMO_PIECES = 65_536;
const MEMO_PIECE_CHARS = 32;

/**
 * The longest start of `text` that is at most `tokens` tokens, cut on a token boundary (and
 * never inside a character: a token that ends mid-character is dropped with its partial bytes).
 */
export function firstTokens(text: string, tokens: number): string {
  const all = encode(text);
  if (all.length <= tokens) return text;
  return withDecodeTable((encoder ??= buildEncoder())).decode(all.slice(0, Math.max(0, tokens))).replace(/\uFFFD+$/, '');
}

const PIECES = new RegExp(o200k.pat_str, 'gu');
const UTF8 = new TextEncoder();
const FROM_UTF8 = new TextDecoder();

/**
 * The library's encode with no special tokens, each piece merged by `mergePairs` (linear in a
 * long piece where the library's merge is quadratic); a test checks the tokens are the same.
 */
function encode(text: string): number[] {
  encoder ??= buildEncoder();
  const ranks = (encoder as unknown as Partial<RankTables>).rankMap;
  if (!(ranks instanceof Map)) return encoder.encode(text, [], []);
  const tokens: number[] = [];
  for (const match of text.matchAll(PIECES)) for (const token of tokensOfPiece(match[0], ranks)) tokens.push(token);
  return tokens;
}

function tokensOfPiece(piece: string, ranks: ReadonlyMap<string, number>): number[] {
  return tokensOfBytes(UTF8.encode(piece), ranks);
}

function tokensOfBytes(bytes: Uint8Array, ranks: ReadonlyMap<string, number>): number[] {
  const whole = ranks.get(bytes.join(','));
  return whole !== undefined ? [whole] : mergePairs(bytes, ranks);
}
