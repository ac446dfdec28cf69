/**
 * FTS4's snippet() computed in JavaScript from the stored text, so an excerpt costs a lookup by
 * docid instead of a second MATCH pass over every match of the query (on a common word that
 * pass walks tens of thousands of doclist entries to keep 20 rows). It follows FTS4's own
 * rules — candidate fragments end at each phrase hit, a phrase scores 1000 the first time it is
 * covered and 1 for each further hit, the chosen fragment is shifted to centre its hits, up to
 * four fragments when one cannot cover every phrase — so the excerpts read as before; the
 * differential test compares them with SQLite's snippet() on real transcripts.
 */

import { queryWords, wordPositions, type QueryWords } from './snippetWords';

/** Characters unicode61 starts a token with, and those it continues one with (diacritics join the token). */
const TOKEN = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{Co}\p{M}]*/gu;
const TOKEN_START = /^[\p{L}\p{N}\p{Co}]$/u;
const TOKEN_MARK = /^\p{M}$/u;
const MARKS = /\p{M}/gu;

/** A text's tokens: where each starts and ends, and whether it equals (or, as a prefix, begins with) a folded query word. */
export interface Tokens {
  count: number;
  starts: ArrayLike<number>;
  ends: ArrayLike<number>;
  /** 1 for a token of ASCII characters only. */
  plain: ArrayLike<number>;
  is(i: number, word: string, prefix: boolean): boolean;
}

/**
 * Folded non-ASCII tokens: normalize('NFD') was the largest single cost of an excerpt on rare
 * words, and the same words recur from one text to the next. A pure function of its input.
 */
const foldedWords = new Map<string, string>();

/** unicode61 with remove_diacritics: case folded, diacritics dropped. */
export function foldToken(word: string): string {
  if (/^[\x00-\x7f]*$/.test(word)) return word.toLowerCase();
  let folded = foldedWords.get(word);
  if (folded === undefined) {
    folded = word.normalize('NFD').replace(MARKS, '').toLowerCase();
    if (foldedWords.size >= 65536) foldedWords.clear();
    foldedWords.set(word, folded);
  }
  return folded;
}

const STARTS = 1;
const CONTINUES = 2;
/**
 * TOKEN's classes for the code points above ASCII met so far. Running a Unicode-property regex
 * over every text, and folding every token, cost most of an excerpt on texts with a single
 * non-ASCII character (half of real chat messages): texts are scanned by char code instead and
 * only the rare code point is classified by the regex, once. The Basic Multilingual Plane's
 * classes sit in a table (class + 1, 0 for not met yet), the rest in a map.
 */
const bmpClasses = new Uint8Array(0x10000);
const classes = new Map<number, number>();

function classOf(codePoint: number): number {
  if (codePoint < 0x10000) {
    const known = bmpClasses[codePoint] as number;
    if (known) return known - 1;
  } else {
    const known = classes.get(codePoint);
    if (known !== undefined) return known;
  }
  const ch = String.fromCodePoint(codePoint);
  const c = TOKEN_START.test(ch) ? STARTS : TOKEN_MARK.test(ch) ? CONTINUES : 0;
  if (codePoint < 0x10000) bmpClasses[codePoint] = c + 1;
  else {
    if (classes.size >= 65536) classes.clear();
    classes.set(codePoint, c);
  }
  return c;
}

/**
 * Where the last scan put its tokens. An excerpt is built synchronously from one scan, so one set
 * of buffers, grown as needed, serves every text: arrays pushed token by token, and the garbage
 * they left, were a third of an excerpt's cost on long tool outputs.
 */
let scanStarts = new Int32Array(1024);
let scanEnds = new Int32Array(1024);
/** 1 for a token of ASCII characters only. */
let scanPlain = new Uint8Array(1024);

function grow(): void {
  const n = scanStarts.length * 2;
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  const plain = new Uint8Array(n);
  starts.set(scanStarts);
  ends.set(scanEnds);
  plain.set(scanPlain);
  scanStarts = starts;
  scanEnds = ends;
  scanPlain = plain;
}

/** The tokens TOKEN finds, scanned by char code into the scan buffers; returns how many. */
function scan(text: string): number {
  let count = 0;
  let start = -1;
  let ascii = 1;
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    let cls: number;
    let width = 1;
    if (c < 128) {
      const lower = c | 32;
      cls = (c >= 48 && c <= 57) || (lower >= 97 && lower <= 122) ? STARTS : 0;
    } else {
      const cp = text.codePointAt(i) as number;
      if (cp > 0xffff) width = 2;
      cls = classOf(cp);
    }
    if (start < 0) {
      if (cls === STARTS) {
        start = i;
        ascii = c < 128 ? 1 : 0;
      }
    } else if (cls === 0) {
      if (count === scanStarts.length) grow();
      scanStarts[count] = start;
      scanEnds[count] = i;
      scanPlain[count] = ascii;
      count++;
      start = -1;
    } else if (c >= 128) ascii = 0;
    i += width;
  }
  if (start >= 0) {
    if (count === scanStarts.length) grow();
    scanStarts[count] = start;
    scanEnds[count] = n;
    scanPlain[count] = ascii;
    count++;
  }
  return count;
}

/**
 * `text`'s tokens as a scan found them. A token of ASCII characters is compared with a query
 * word in place, letter case folded by code; any other token is folded with foldToken once,
 * when first compared.
 */
function tokensOf(text: string, count: number, starts: ArrayLike<number>, ends: ArrayLike<number>, plain: ArrayLike<number>): Tokens {
  const folded: (string | undefined)[] = [];
  const is = (i: number, word: string, prefix: boolean) => {
    const s = starts[i] as number;
    const e = ends[i] as number;
    if (plain[i]) {
      if (prefix ? e - s < word.length : e - s !== word.length) return false;
      for (let k = 0; k < word.length; k++) {
        let c = text.charCodeAt(s + k);
        if (c >= 65 && c <= 90) c += 32;
        if (c !== word.charCodeAt(k)) return false;
      }
      return true;
    }
    // Folding keeps an ASCII first character as it is, lower-cased: most tokens are ruled out by it.
    const first = text.charCodeAt(s);
    if (first < 128 && (first >= 65 && first <= 90 ? first + 32 : first) !== word.charCodeAt(0)) return false;
    const f = (folded[i] ??= foldToken(text.slice(s, e)));
    return prefix ? f.startsWith(word) : f === word;
  };
  return { count, starts, ends, plain, is };
}

/** The tokens TOKEN finds, scanned by char code, in arrays of their own (the next scan leaves them alone). */
export function tokenize(text: string): Tokens {
  const n = scan(text);
  return tokensOf(text, n, Array.from(scanStarts.subarray(0, n)), Array.from(scanEnds.subarray(0, n)), scanPlain.slice(0, n));
}

export interface SnippetPhrase {
  tokens: string[];
  /** The last token matches any token it begins (FTS4 "word*"). */
  prefix: boolean;
}

/** The phrases of a MATCH expression that parseMatchQuery built: every phrase quoted, optionally ending in *. */
export function phrasesOfMatch(match: string): SnippetPhrase[] {
  const out: SnippetPhrase[] = [];
  for (const m of match.matchAll(/"([^"]*)"/g)) {
    const body = m[1] as string;
    const prefix = body.endsWith('*');
    const tokens = (prefix ? body.slice(0, -1) : body).match(TOKEN)?.map(foldToken) ?? [];
    if (tokens.length) out.push({ tokens, prefix });
  }
  return out;
}

/** Positions of each phrase's LAST token, as FTS4's position lists report a phrase (past 32 words; snippetWords.ts below that). */
function phrasePositions(tokens: Tokens, phrases: readonly SnippetPhrase[]): number[][] {
  return phrases.map((p) => {
    const n = p.tokens.length;
    const out: number[] = [];
    for (let i = 0; i + n <= tokens.count; i++) {
      let ok = true;
      for (let j = 0; j < n && ok; j++) ok = tokens.is(i + j, p.tokens[j] as string, p.prefix && j === n - 1);
      if (ok) out.push(i + n - 1);
    }
    return out;
  });
}

interface Fragment {
  pos: number;
  /** Token offsets within the fragment to highlight. */
  highlight: Set<number>;
  covered: Set<number>;
}

/** fts3BestSnippet: the best-scoring window of `size` tokens, given the phrases earlier fragments covered. */
function bestFragment(positions: readonly number[][], lengths: readonly number[], size: number, covered: ReadonlySet<number>, seen: Set<number>): Fragment {
  positions.forEach((p, i) => p.length && seen.add(i));
  const head = positions.map(() => 0);
  const tail = positions.map(() => 0);
  const advance = (idx: number[], i: number, next: number) => {
    const list = positions[i] as number[];
    while ((idx[i] as number) < list.length && (list[idx[i] as number] as number) < next) idx[i] = (idx[i] as number) + 1;
  };
  let best: Fragment = { pos: 0, highlight: new Set(), covered: new Set() };
  let bestScore = -1;
  let start = 0;
  positions.forEach((_, i) => advance(head, i, size));
  // The hits of phrase i inside [start, start + size), from its tail (already at or past start).
  const hitsIn = (i: number, start: number) => {
    const list = positions[i] as number[];
    let k = tail[i] as number;
    while (k < list.length && (list[k] as number) < start + size) k++;
    return k - (tail[i] as number);
  };
  for (;;) {
    // Score the window [start, start + size) as fts3SnippetDetails does: 1000 for a phrase not
    // covered yet, 1 for each further hit. Many windows are scored, so nothing is allocated
    // unless the window is the best so far.
    let score = 0;
    for (let i = 0; i < positions.length; i++) {
      const n = hitsIn(i, start);
      if (n) score += covered.has(i) ? n : 999 + n;
    }
    if (score > bestScore) {
      const cover = new Set<number>();
      const highlight = new Set<number>();
      positions.forEach((list, i) => {
        const n = hitsIn(i, start);
        if (n) cover.add(i);
        for (let k = tail[i] as number; k < (tail[i] as number) + n; k++) {
          const at = list[k] as number;
          for (let j = 0; j < (lengths[i] as number); j++) if (at - j >= start) highlight.add(at - j - start);
        }
      });
      best = { pos: start, highlight, covered: cover };
      bestScore = score;
    }
    // Next candidate: the window that ends at the nearest hit not yet seen.
    let end = Infinity;
    positions.forEach((list, i) => {
      const at = list[head[i] as number];
      if (at !== undefined && at < end) end = at;
    });
    if (end === Infinity) return best;
    start = end - size + 1;
    positions.forEach((_, i) => {
      advance(head, i, end + 1);
      advance(tail, i, start);
    });
  }
}

/** fts3SnippetShift: moves the window right so its hits sit in the middle, as far as the text allows. */
function shift(f: Fragment, size: number, tokenCount: number): Fragment {
  if (!f.highlight.size) return f;
  let left = 0;
  while (!f.highlight.has(left)) left++;
  let right = 0;
  while (!f.highlight.has(size - 1 - right)) right++;
  const desired = Math.trunc((left - right) / 2);
  if (desired <= 0) return f;
  const by = Math.min(desired, tokenCount - f.pos - size);
  if (by <= 0) return f;
  return { ...f, pos: f.pos + by, highlight: new Set([...f.highlight].map((h) => h - by).filter((h) => h >= 0)) };
}

/** fts3SnippetText: the fragment's tokens with what lies between them, hits in open/close, ellipses where text was cut. */
function fragmentText(text: string, tokens: Tokens, f: Fragment, index: number, isLast: boolean, size: number, open: string, close: string, ellipsis: string): string {
  let out = '';
  // A text with no tokens at all comes back whole, as FTS4 appends what follows the last token.
  if (f.pos >= tokens.count) return text;
  const firstStart = tokens.starts[f.pos] as number;
  if (f.pos > 0 || index > 0) out += ellipsis;
  else out += text.slice(0, firstStart);
  let prevEnd = firstStart;
  for (let i = f.pos; i < f.pos + size; i++) {
    if (i >= tokens.count) return out + text.slice(prevEnd);
    const start = tokens.starts[i] as number;
    const end = tokens.ends[i] as number;
    if (i > f.pos) out += text.slice(prevEnd, start);
    const hit = f.highlight.has(i - f.pos);
    out += hit ? open + text.slice(start, end) + close : text.slice(start, end);
    prevEnd = end;
  }
  if (f.pos + size >= tokens.count) return out + text.slice(prevEnd);
  return isLast ? out + ellipsis : out;
}

/**
 * snippet(table, open, close, ellipsis, 0, tokens) for one text: up to four fragments, each
 * shorter as more are needed, until every phrase the text holds is shown.
 */
export function snippetOf(text: string, phrases: readonly SnippetPhrase[], tokens: number, open = '[', close = ']', ellipsis = '…'): string {
  return snippetsOf(phrases, tokens, open, close, ellipsis)(text);
}

/** snippetOf for the texts of one query: its words are gathered once. */
export function snippetsOf(phrases: readonly SnippetPhrase[], tokens: number, open = '[', close = ']', ellipsis = '…'): (text: string) => string {
  const words = queryWords(phrases);
  return (text) => excerpt(text, phrases, words, tokens, open, close, ellipsis);
}

function excerpt(text: string, phrases: readonly SnippetPhrase[], words: QueryWords | null, tokens: number, open: string, close: string, ellipsis: string): string {
  // The scan buffers serve as they are: nothing else scans until this excerpt is built.
  const toks = tokensOf(text, scan(text), scanStarts, scanEnds, scanPlain);
  const positions = words ? wordPositions(toks, words, text) : phrasePositions(toks, phrases);
  const lengths = phrases.map((p) => p.tokens.length);
  let fragments: Fragment[] = [];
  let size = tokens;
  for (let count = 1; count <= 4; count++) {
    size = Math.trunc((tokens + count - 1) / count);
    const covered = new Set<number>();
    const seen = new Set<number>();
    fragments = [];
    for (let i = 0; i < count; i++) {
      const f = bestFragment(positions, lengths, size, covered, seen);
      fragments.push(f);
      for (const c of f.covered) covered.add(c);
    }
    if (covered.size === seen.size) break;
  }
  return fragments
    .map((f, i) => fragmentText(text, toks, shift(f, size, toks.count), i, i === fragments.length - 1, size, open, close, ellipsis))
    .join('');
}
