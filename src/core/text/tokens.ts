import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

let encoder: Tiktoken | undefined;

/**
 * Building the o200k tables takes most of a second; long-lived processes (the extension host,
 * the MCP server) call this once they are idle after start, so no tool call pays for it.
 */
export function warmTokenizer(delayMs = 0): void {
  setTimeout(() => {
    encoder ??= new Tiktoken(o200k);
  }, delayMs).unref();
}

/**
 * Token counts from a real BPE tokenizer (o200k, the GPT-4o family's), because budgets that
 * a model reads must be in the unit the model pays in, not characters ÷ 4.
 */
export function countTokens(text: string): number {
  encoder ??= new Tiktoken(o200k);
  return encoder.encode(text, [], []).length;
}

/**
 * The longest start of `text` that is at most `tokens` tokens, cut on a token boundary (and
 * never inside a character: a token that ends mid-character is dropped with its partial bytes).
 */
export function firstTokens(text: string, tokens: number): string {
  encoder ??= new Tiktoken(o200k);
  const all = encoder.encode(text, [], []);
  if (all.length <= tokens) return text;
  return encoder.decode(all.slice(0, Math.max(0, tokens))).replace(/\uFFFD+$/, '');
}
