/**
 * FTS4's snippet() computed in JavaScript from the stored text, so an excerpt costs a lookup by
 * docid instead of a second MATCH pass over every match of the query (on a common word that
 * pass walks tens of thousands of doclist entries to keep 20 rows). It follows FTS4's own
 * rules — candidate fragments end at each phrase hit, a phrase scores 1000 the first time it is
 * covered and 1 for each further hit, the chosen fragment is shifted to centre its hits, up to
 * four fragments when one cannot cover every phrase — over the text's index terms as the
 * analyzer finds them (src/core/text/analyzer.ts), each at its place in the original text, so
 * the excerpt shows and highlights the original words. SQLite's own snippet() would show the
 * indexed terms column instead; the differential test runs these rules over that column
 * (termSnippetOf) and compares the two on real transcripts.
 */

import { cjkTerms, forEachRun, stemWord, wordTerms } from '../text/analyzer';
import { queryWords, wordPositions, type QueryWords } from './snippetWords';

/** A text's terms: where each lies in the text, and whether it equals (or, as a prefix, begins with) a query term. */
export interface Tokens {
  count: number;
  starts: ArrayLike<number>;
  ends: ArrayLike<number>;
  /** 1 for a word of ASCII characters only, whose term is its lower case, stemmed (a prefix of it). */
  plain: ArrayLike<number>;
  is(i: number, word: string, prefix: boolean): boolean;
}

/**
 * Where the last scan put its terms. An excerpt is built synchronously from one scan, so one set
 * of buffers, grown as needed, serves every text: arrays pushed token by token, and the garbage
 * they left, were a third of an excerpt's cost on long tool outputs.
 */
let scanStarts = new Int32Array(1024);
let scanEnds = new Int32Array(1024);
let scanPlain = new Uint8Array(1024);
/** The term of each token that is not plain (a plain word's term is computed only when compared). */
let scanTerms: (string | undefined)[] = [];

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

/** The text's terms, as the index holds them, into the scan buffers; returns how many. */
function scan(text: string): number {
  let count = 0;
  const push = (start: number, end: number, plain: number, term: string | undefined) => {
    if (count === scanStarts.length) grow();
    scanStarts[count] = start;
    scanEnds[count] = end;
    scanPlain[count] = plain;
    scanTerms[count] = term;
    count++;
  };
  forEachRun(text, (start, end, cjk, ascii) => {
    if (ascii) push(start, end, 1, undefined);
    else if (cjk) cjkTerms(text, start, end, 0, (t, s, e) => push(s, e, 0, t));
    else for (const t of wordTerms(text.slice(start, end))) push(start, end, 0, t);
  });
  if (scanTerms.length > count * 4 && scanTerms.length > 4096) scanTerms = scanTerms.slice(0, count);
  return count;
}

/**
 * `text`'s tokens as a scan found them. A plain word is ruled out by comparing its characters
 * with the query term in place (its term begins it, letter case folded by code), and stemmed
 * only when it begins with the term; any other token's term was found by the scan.
 */
function tokensOf(text: string, count: number, starts: ArrayLike<number>, ends: ArrayLike<number>, plain: ArrayLike<number>, terms: (string | undefined)[]): Tokens {
  const stemmed = new Array<string | undefined>(count);
  const is = (i: number, word: string, prefix: boolean) => {
    const s = starts[i] as number;
    const e = ends[i] as number;
    if (plain[i]) {
      if (e - s < word.length) return false;
      for (let k = 0; k < word.length; k++) {
        let c = text.charCodeAt(s + k);
        if (c >= 65 && c <= 90) c += 32;
        if (c !== word.charCodeAt(k)) return false;
      }
      const term = (stemmed[i] ??= stemWord(text.slice(s, e).toLowerCase()));
      return prefix ? term.length >= word.length : term === word;
    }
    const term = terms[i] as string;
    return prefix ? term.startsWith(word) : term === word;
  };
  return { count, starts, ends, plain, is };
}

/** The terms a scan finds, in arrays of their own (the next scan leaves them alone). */
export function tokenize(text: string): Tokens & { terms: string[] } {
  const n = scan(text);
  const tokens = tokensOf(text, n, Array.from(scanStarts.subarray(0, n)), Array.from(scanEnds.subarray(0, n)), scanPlain.slice(0, n), scanTerms.slice(0, n));
  const terms = Array.from({ length: n }, (_, i) => scanTerms[i] ?? stemWord(text.slice(scanStarts[i] as number, scanEnds[i] as number).toLowerCase()));
  return { ...tokens, terms };
}

/** The tokens of an indexed terms column as FTS4's simple tokenizer reads it: the runs between spaces. */
function termColumnTokens(terms: string): Tokens {
  const starts: number[] = [];
  const ends: number[] = [];
  const words: string[] = [];
  for (const m of terms.matchAll(/[^ ]+/g)) {
    starts.push(m.index);
    ends.push(m.index + m[0].length);
    words.push(m[0]);
  }
  const is = (i: number, word: string, prefix: boolean) => (prefix ? (words[i] as string).startsWith(word) : words[i] === word);
  return { count: words.length, starts, ends, plain: new Uint8Array(words.length), is };
}

export interface SnippetPhrase {
  tokens: string[];
  /** The last token matches any token it begins (FTS4 "word*"). */
  prefix: boolean;
}

/** The phrases of a MATCH expression that parseMatchQuery built: every phrase quoted, its index terms separated by spaces, optionally ending in *. */
export function phrasesOfMatch(match: string): SnippetPhrase[] {
  const out: SnippetPhrase[] = [];
  for (const m of match.matchAll(/"([^"]*)"/g)) {
    const body = m[1] as string;
    const prefix = body.endsWith('*');
    const tokens = (prefix ? body.slice(0, -1) : body).split(' ').filter((t) => t !== '');
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

/**
 * fts3SnippetText: the fragment's text from its first token to its last, hits in open/close,
 * ellipses where text was cut. A hit is marked over the original characters its term came
 * from; hits that overlap or touch (the pairs of a CJK word, the parts of one folded word) are
 * one mark.
 */
function fragmentText(text: string, tokens: Tokens, f: Fragment, index: number, isLast: boolean, size: number, open: string, close: string, ellipsis: string): string {
  // A text with no tokens at all comes back whole, as FTS4 appends what follows the last token.
  if (f.pos >= tokens.count) return text;
  const firstStart = tokens.starts[f.pos] as number;
  const last = Math.min(f.pos + size, tokens.count) - 1;
  let fragEnd = 0;
  for (let i = f.pos; i <= last; i++) fragEnd = Math.max(fragEnd, tokens.ends[i] as number);
  let out = f.pos > 0 || index > 0 ? ellipsis : text.slice(0, firstStart);
  let at = firstStart;
  let markStart = -1;
  let markEnd = -1;
  const flush = () => {
    if (markStart < 0) return;
    out += text.slice(at, markStart) + open + text.slice(markStart, markEnd) + close;
    at = markEnd;
    markStart = -1;
  };
  for (let i = f.pos; i <= last; i++) {
    if (!f.highlight.has(i - f.pos)) continue;
    const start = Math.max(tokens.starts[i] as number, at);
    const end = tokens.ends[i] as number;
    if (end <= start) continue;
    if (markStart >= 0 && start <= markEnd) markEnd = Math.max(markEnd, end);
    else {
      flush();
      markStart = start;
      markEnd = end;
    }
  }
  flush();
  out += text.slice(at, fragEnd);
  if (f.pos + size >= tokens.count) return out + text.slice(fragEnd);
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
  // The scan buffers serve as they are: nothing else scans until this excerpt is built.
  return (text) => excerpt(text, tokensOf(text, scan(text), scanStarts, scanEnds, scanPlain, scanTerms), phrases, words, tokens, open, close, ellipsis);
}

/**
 * The same rules over a row's indexed terms column, read as FTS4's simple tokenizer reads it:
 * what SQLite's own snippet() of that column returns, which the differential test compares
 * with, so the rules stay FTS4's.
 */
export function termSnippetOf(terms: string, phrases: readonly SnippetPhrase[], tokens: number, open = '[', close = ']', ellipsis = '…'): string {
  return excerpt(terms, termColumnTokens(terms), phrases, null, tokens, open, close, ellipsis);
}

function excerpt(text: string, toks: Tokens, phrases: readonly SnippetPhrase[], words: QueryWords | null, tokens: number, open: string, close: string, ellipsis: string): string {
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
