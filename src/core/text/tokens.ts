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
 */
export function buildEncoder(): Tiktoken {
  const built = new Tiktoken({ ...o200k, bpe_ranks: '' });
  const tables = built as unknown as Partial<RankTables>;
  if (!(tables.rankMap instanceof Map) || !(tables.textMap instanceof Map) || tables.rankMap.size !== 0) return new Tiktoken(o200k);
  const { rankMap, textMap } = tables as RankTables;
  // Each line: "! <first rank> <base64 token> <base64 token> ...", ranks consecutive.
  for (const line of o200k.bpe_ranks.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    let rank = Number.parseInt(fields[1] ?? '', 10);
    for (let i = 2; i < fields.length; i++, rank++) {
      const decoded = Buffer.from(fields[i] ?? '', 'base64');
      const bytes = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.length);
      rankMap.set(bytes.join(','), rank);
      textMap.set(rank, bytes);
    }
  }
  return built;
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
  return encode(text).length;
}

/**
 * The longest start of `text` that is at most `tokens` tokens, cut on a token boundary (and
 * never inside a character: a token that ends mid-character is dropped with its partial bytes).
 */
export function firstTokens(text: string, tokens: number): string {
  const all = encode(text);
  if (all.length <= tokens) return text;
  return (encoder ??= buildEncoder()).decode(all.slice(0, Math.max(0, tokens))).replace(/\uFFFD+$/, '');
}

const PIECES = new RegExp(o200k.pat_str, 'gu');
const UTF8 = new TextEncoder();

/**
 * The library's encode with no special tokens, each piece merged by `mergePairs` (linear in a
 * long piece where the library's merge is quadratic); a test checks the tokens are the same.
 */
function encode(text: string): number[] {
  encoder ??= buildEncoder();
  const ranks = (encoder as unknown as Partial<RankTables>).rankMap;
  if (!(ranks instanceof Map)) return encoder.encode(text, [], []);
  const tokens: number[] = [];
  for (const match of text.matchAll(PIECES)) {
    const bytes = UTF8.encode(match[0]);
    const whole = ranks.get(bytes.join(','));
    if (whole !== undefined) tokens.push(whole);
    else for (const token of mergePairs(bytes, ranks)) tokens.push(token);
  }
  return tokens;
}
