import type { LinearRegex } from './linearRegex';
import type { CompiledPattern } from './regexPattern';

/** What lcm_grep's regex scan does with a candidate's text besides the regex itself: cheap literal checks first, the excerpt after. */

const SNIPPET_CONTEXT = 80;
/** In relevance order a regex match scores by how often it occurs, up to this many. */
const MAX_COUNTED = 1000;

/** What the regex found in one text: where its first match is, and how many there are (1 when not counted). */
export type Outcome = { index: number; length: number; count: number } | null;

export interface LiteralCheck {
  text(text: string): boolean;
  /** A check on the raw UTF-8 bytes, when one is cheaper than decoding them (else the decoded text is checked). */
  bytes?: ((bytes: Buffer) => boolean) | undefined;
}

/**
 * Whether a text holds every literal a match must contain, or undefined when plain search
 * cannot tell. An indexOf is far cheaper than the regex on long texts that lack them, and on a
 * large event's raw bytes it also saves decoding them.
 */
export function literalCheck(pattern: CompiledPattern): LiteralCheck | undefined {
  const literals = pattern.literals;
  if (!literals.length) return undefined;
  if (pattern.caseInsensitive) {
    // RE2's /i folds an ASCII letter only with ASCII letters, except s with ſ and k with K
    // (foldsBeyondAscii), so each literal, searched case-insensitively, is found wherever a
    // match holds it. A regex of the literal alone skips the copy lower-casing the whole text
    // would make.
    if (pattern.foldsBeyondAscii || !literals.every((l) => /^[\x00-\x7f]+$/.test(l))) return undefined;
    const res = literals.map((l) => new RegExp(l.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'i'));
    // The same test on a blob's raw bytes: most large outputs are not pure ASCII, their decoded
    // text is then a two-byte string, and decoding it and running /i over it cost several times
    // this scan (measured on the bench's blobs), which a blob whose filter passed by chance now skips.
    const folded = literals.map((l) => Buffer.from(l.toLowerCase(), 'latin1'));
    return { text: (t: string) => res.every((re) => re.test(t)), bytes: (b: Buffer) => folded.every((l) => holdsFolded(b, l)) };
  }
  const encoded = literals.map((l) => Buffer.from(l, 'utf8'));
  // A lone surrogate or U+FFFD has no exact byte form: decoding can produce U+FFFD from bytes
  // that never held it, so such literals are looked for in the decoded text only.
  const byBytes = encoded.every((b, i) => b.toString('utf8') === literals[i] && !literals[i]?.includes('\uFFFD'));
  return {
    text: (text) => literals.every((l) => text.includes(l)),
    bytes: (bytes) => !byBytes || encoded.every((l) => bytes.includes(l)),
  };
}

/**
 * Whether `bytes` hold `lower` (ASCII, lower case) with its letters in either case: what /i
 * without u finds in the decoded text, since UTF-8 writes every other character with bytes
 * above 0x7f and such characters never fold into ASCII under /i.
 */
export function holdsFolded(bytes: Buffer, lower: Uint8Array): boolean {
  const n = lower.length;
  if (!n) return true;
  const first = lower[0] as number;
  const starts = isLowerLetter(first) ? [first, first - 32] : [first];
  for (const start of starts) {
    for (let at = bytes.indexOf(start); at >= 0 && at + n <= bytes.length; at = bytes.indexOf(start, at + 1)) {
      let k = 1;
      for (; k < n; k++) {
        const want = lower[k] as number;
        const got = bytes[at + k] as number;
        if (got !== want && !(isLowerLetter(want) && got === want - 32)) break;
      }
      if (k === n) return true;
    }
  }
  return false;
}

const isLowerLetter = (b: number): boolean => b >= 97 && b <= 122;

/** The match in [brackets] with some context either side, on one line. */
export function regexSnippet(text: string, index: number, length: number): string {
  const start = Math.max(0, index - SNIPPET_CONTEXT);
  const end = Math.min(text.length, index + length + SNIPPET_CONTEXT);
  const flat = (s: string) => s.replace(/\s+/g, ' ');
  const match = text.slice(index, index + length);
  const shown = match.length > 200 ? `${match.slice(0, 200)}…` : match;
  const snippet = `${start > 0 ? '…' : ''}${flat(text.slice(start, index))}[${flat(shown)}]${flat(text.slice(index + length, end))}${end < text.length ? '…' : ''}`;
  // V8 builds this as a tree of slices that point into the whole text, so every hit kept the
  // text it came from alive until the search ended (tens of megabytes on a full scan, copied by
  // each young-generation collection). Reading a character flattens the tree into a copy of its
  // own characters and lets the text go.
  snippet.charCodeAt(0);
  return snippet;
}

/** The regex's first match in `text` and, when `counting`, how many matches it holds (up to MAX_COUNTED). */
export function testText(re: LinearRegex, text: string, counting: boolean): Outcome {
  const first = re.firstMatch(text);
  if (!first) return null;
  let count = 1;
  if (counting) {
    let at = first.index + Math.max(1, first.length);
    for (let m = re.firstMatch(text, at); m && count < MAX_COUNTED; m = at <= text.length ? re.firstMatch(text, at) : null) {
      count++;
      at = m.index + Math.max(1, m.length);
    }
  }
  return { index: first.index, length: first.length, count };
}
