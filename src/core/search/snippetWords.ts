import type { SnippetPhrase, Tokens } from './snippet';

/**
 * Where an excerpt's phrases occur among a text's tokens, found with one pass over the tokens
 * for all the query's words. Comparing each phrase's words with every token through Tokens.is,
 * a call per token, word and phrase, was up to a third of an excerpt's time (profiled) on the
 * 4,000-character tool outputs searches show; here each token gets a bit per word it matches,
 * by the same comparisons, and each phrase's positions follow from the bits. Measured in a
 * process holding the 1 GB bench store, between searches (the 50 shown texts, median of 30,
 * 3 runs): "npm run dev" (200,000 characters) ~2.2 → ~1.8 ms, "mcp readme" (109,000) ~1.25 →
 * ~1.2. A branch-free scan over a typed copy of the text (Buffer.write) ran 20% faster alone,
 * no faster there.
 */

/** The distinct words of a query's phrases; bit k of a token's mask stands for words[k]. */
export interface QueryWords {
  words: string[];
  /** Each word's UTF-16 code units. */
  codes: Uint16Array[];
  /** A token matches words[k] when it begins with it (the last word of a "word*" phrase). */
  prefix: boolean[];
  /** Each phrase's bit for each of its tokens. */
  phraseBits: number[][];
}

const MASK_BITS = 32;

/** The phrases' distinct words, or null past MASK_BITS of them (the caller then compares every phrase with every token). */
export function queryWords(phrases: readonly SnippetPhrase[]): QueryWords | null {
  const bits = new Map<string, number>();
  const q: QueryWords = { words: [], codes: [], prefix: [], phraseBits: [] };
  for (const p of phrases) {
    q.phraseBits.push(
      p.tokens.map((word, j) => {
        const prefix = p.prefix && j === p.tokens.length - 1;
        const key = `${prefix ? '*' : '='}${word}`;
        let k = bits.get(key);
        if (k === undefined) {
          k = q.words.length;
          bits.set(key, k);
          q.words.push(word);
          q.codes.push(Uint16Array.from({ length: word.length }, (_, i) => word.charCodeAt(i)));
          q.prefix.push(prefix);
        }
        return (1 << k) >>> 0;
      }),
    );
  }
  return q.words.length > MASK_BITS ? null : q;
}

/** Token masks, kept between excerpts (one is built at a time) and grown as needed. */
let masks = new Uint32Array(1024);

/**
 * Each phrase's positions (the index of its LAST token, as FTS4's position lists report a
 * phrase) among the tokens of `text`. A token of ASCII characters is first compared with a
 * word's beginning in place, letter case folded by code; what passes, and any other token, goes
 * through Tokens.is itself.
 */
export function wordPositions(tokens: Tokens, q: QueryWords, text: string): number[][] {
  const { count, starts, ends, plain } = tokens;
  if (masks.length < count) masks = new Uint32Array(2 ** Math.ceil(Math.log2(count)));
  const out = masks;
  const { codes, prefix } = q;
  const n = codes.length;
  for (let i = 0; i < count; i++) {
    let mask = 0;
    if (plain[i]) {
      const s = starts[i] as number;
      const length = (ends[i] as number) - s;
      for (let k = 0; k < n; k++) {
        const word = codes[k] as Uint16Array;
        const w = word.length;
        // A plain word's term (its stem) begins it: a word that does not begin with the term is out
        // without stemming it, and Tokens.is stems only the rest.
        if (length < w) continue;
        let j = 0;
        for (; j < w; j++) {
          const c = text.charCodeAt(s + j);
          if ((c >= 65 && c <= 90 ? c + 32 : c) !== word[j]) break;
        }
        if (j === w && tokens.is(i, q.words[k] as string, prefix[k] as boolean)) mask |= 1 << k;
      }
    } else {
      for (let k = 0; k < n; k++) if (tokens.is(i, q.words[k] as string, prefix[k] as boolean)) mask |= 1 << k;
    }
    out[i] = mask >>> 0;
  }
  return q.phraseBits.map((bits) => {
    const len = bits.length;
    const first = bits[0] as number;
    const positions: number[] = [];
    for (let i = 0; i + len <= count; i++) {
      if (!((out[i] as number) & first)) continue;
      let j = 1;
      while (j < len && (out[i + j] as number) & (bits[j] as number)) j++;
      if (j === len) positions.push(i + len - 1);
    }
    return positions;
  });
}
