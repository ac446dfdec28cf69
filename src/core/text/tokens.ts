import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

let encoder: Tiktoken | undefined;

/**
 * Token counts from a real BPE tokenizer (o200k, the GPT-4o family's), because budgets that
 * a model reads must be in the unit the model pays in, not characters ÷ 4.
 */
export function countTokens(text: string): number {
  encoder ??= new Tiktoken(o200k);
  return encoder.encode(text, [], []).length;
}
