import { porterStem } from './porterStemmer';

/**
 * The one text analysis every full-text index and every query goes through, so that what a
 * query asks for is spelled the way the index stores it:
 * - words are runs of letters, digits and marks (what unicode61 kept together before), split
 *   where a CJK script begins or ends;
 * - a word is folded: compatibility forms unified (NFKD: "ﬁ" → "fi", full-width → ASCII),
 *   diacritics dropped, lower case;
 * - an English word (ASCII letters only) is stemmed, so "dependencies" finds "dependency";
 * - Han, Hiragana, Katakana and Hangul, written without spaces between words, become overlapping
 *   pairs of characters ("髪の毛" → "髪の", "の毛"), so any word inside a sentence is a phrase
 *   of consecutive pairs; a run of one character is that character.
 *
 * The index stores the terms joined by spaces (tokenized by FTS4's `simple` tokenizer, which
 * then splits exactly there), next to the original text, which excerpts read; `analyzeSpans`
 * gives each term's place in that original text, so excerpts highlight the words the index
 * matched. Changing anything here changes what the index holds: raise ANALYSIS_VERSION, and
 * stores built with another version are rebuilt from their journal when opened.
 */
export const ANALYSIS_VERSION = '1';

/**
 * The stem kept for an English word: Porter's stem cut back to the part it shares with the word,
 * less a last "e" or "i" ("applies", "applied", "apply" → "appl"; "hoping", "hope" → "hop"). So
 * a term is always a prefix of its folded word, which lets lcm_grep's regex mode still narrow by
 * the index: a text holding a word holds a term that begins that word.
 */
const stems = new Map<string, string>();

export function stemWord(word: string): string {
  // Only words of letters: an identifier with a digit ("v2ray", "utf8") is kept whole.
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  let stem = stems.get(word);
  if (stem !== undefined) return stem;
  const porter = porterStem(word);
  let n = 0;
  while (n < porter.length && porter.charCodeAt(n) === word.charCodeAt(n)) n++;
  if (n > 2 && (word[n - 1] === 'e' || word[n - 1] === 'i')) n--;
  stem = n > 0 ? word.slice(0, n) : word;
  if (stems.size >= 65536) stems.clear(); // a pure function's results: dropping them changes nothing
  stems.set(word, stem);
  return stem;
}

const SEPARATOR = 0;
const WORD = 1; // starts or continues a word
const MARK = 2; // continues a word or a CJK character, never starts one
const CJK = 3;

const LETTER = /^[\p{L}\p{N}\p{Co}]$/u;
const COMBINING = /^\p{M}$/u;
const CJK_CHAR = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u3005\u3006\u30fc\uff70\uff9e\uff9f]$/u;

/** Each code point's class, found by regex once and kept: the BMP in a table (class + 1), the rest in a map. */
const bmp = new Uint8Array(0x10000);
const astral = new Map<number, number>();

function classOf(cp: number): number {
  if (cp < 128) {
    const lower = cp | 32;
    return (cp >= 48 && cp <= 57) || (lower >= 97 && lower <= 122) ? WORD : SEPARATOR;
  }
  if (cp < 0x10000) {
    const known = bmp[cp] as number;
    if (known) return known - 1;
  } else {
    const known = astral.get(cp);
    if (known !== undefined) return known;
  }
  const ch = String.fromCodePoint(cp);
  const c = CJK_CHAR.test(ch) ? CJK : LETTER.test(ch) ? WORD : COMBINING.test(ch) ? MARK : SEPARATOR;
  if (cp < 0x10000) bmp[cp] = c + 1;
  else {
    if (astral.size >= 65536) astral.clear();
    astral.set(cp, c);
  }
  return c;
}

const MARKS = /\p{M}/gu;
const NOT_LETTERS = /[^\p{L}\p{N}\p{Co}]+/u;
const folds = new Map<string, string[]>();

/** A non-CJK word's terms: folded, split where folding left a separator ("½" → "1", "2"), English stemmed. */
export function wordTerms(word: string): readonly string[] {
  if (/^[\x00-\x7f]*$/.test(word)) return [stemWord(word.toLowerCase())];
  let terms = folds.get(word);
  if (terms === undefined) {
    const folded = word.normalize('NFKD').replace(MARKS, '').toLowerCase();
    terms = folded.split(NOT_LETTERS).filter((t) => t !== '').map((t) => (/^[a-z]+$/.test(t) ? stemWord(t) : t));
    if (folds.size >= 65536) folds.clear();
    folds.set(word, terms);
  }
  return terms;
}

/** A CJK character with the marks that follow it, as the index spells it ("" when nothing of it is a letter). */
const cjkUnits = new Map<string, string>();

function cjkUnit(unit: string): string {
  const cp = unit.charCodeAt(0);
  // The main blocks are their own NFKC form.
  if (unit.length === 1 && ((cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30a1 && cp <= 0x30fa) || (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7a3) || cp === 0x30fc)) return unit;
  let out = cjkUnits.get(unit);
  if (out === undefined) {
    out = unit.normalize('NFKC').replace(/[^\p{L}\p{N}\p{M}]+/gu, '');
    if (cjkUnits.size >= 65536) cjkUnits.clear();
    cjkUnits.set(unit, out);
  }
  return out;
}

/** Receives each term with where it lies in the analyzed text, in order; `run` numbers the words and CJK runs the terms came from. */
export type TermSink = (term: string, start: number, end: number, run: number) => void;

/** Where the CJK units of the run being read start and end, reused from run to run. */
let unitStarts = new Int32Array(256);
let unitEnds = new Int32Array(256);
const unitTexts: string[] = [];

/** The terms of the CJK run text[start, end): its overlapping pairs of characters, or the one character. */
export function cjkTerms(text: string, start: number, end: number, run: number, sink: TermSink): void {
  let n = 0;
  for (let i = start; i < end; ) {
    let j = i + ((text.codePointAt(i) as number) > 0xffff ? 2 : 1);
    while (j < end && classOf(text.codePointAt(j) as number) === MARK) j += (text.codePointAt(j) as number) > 0xffff ? 2 : 1;
    // Half-width kana voicing marks belong to the kana before them.
    while (j < end && (text.charCodeAt(j) === 0xff9e || text.charCodeAt(j) === 0xff9f)) j++;
    const unit = cjkUnit(text.slice(i, j));
    if (unit) {
      if (n === unitStarts.length) {
        const s = new Int32Array(n * 2);
        const e = new Int32Array(n * 2);
        s.set(unitStarts);
        e.set(unitEnds);
        unitStarts = s;
        unitEnds = e;
      }
      unitStarts[n] = i;
      unitEnds[n] = j;
      unitTexts[n] = unit;
      n++;
    }
    i = j;
  }
  if (n === 1) sink(unitTexts[0] as string, unitStarts[0] as number, unitEnds[0] as number, run);
  for (let k = 0; k + 1 < n; k++) sink((unitTexts[k] as string) + (unitTexts[k + 1] as string), unitStarts[k] as number, unitEnds[k + 1] as number, run);
}

/**
 * Visits the runs of `text` the terms come from, in order: words (`ascii` when every character
 * is ASCII, so its one term is its lower case, stemmed) and CJK runs. Scanned by char code, the
 * rare code point above ASCII classified once: excerpts scan every shown text this way.
 */
export function forEachRun(text: string, visit: (start: number, end: number, cjk: boolean, ascii: boolean) => void): void {
  let start = -1;
  let kind = SEPARATOR;
  let ascii = true;
  const n = text.length;
  for (let i = 0; i < n; ) {
    const code = text.charCodeAt(i);
    let c: number;
    let width = 1;
    if (code < 128) {
      const lower = code | 32;
      c = (code >= 48 && code <= 57) || (lower >= 97 && lower <= 122) ? WORD : SEPARATOR;
    } else {
      const cp = text.codePointAt(i) as number;
      if (cp > 0xffff) width = 2;
      c = classOf(cp);
    }
    if (start >= 0 && c !== MARK && c !== kind) {
      visit(start, i, kind === CJK, ascii);
      start = -1;
    }
    if (start < 0) {
      if (c === WORD || c === CJK) {
        start = i;
        kind = c;
        ascii = code < 128;
      }
    } else if (code >= 128) ascii = false;
    i += width;
  }
  if (start >= 0) visit(start, n, kind === CJK, ascii);
}

/** Every term of `text`, in order, with its place in `text`; returns how many runs (words and CJK runs) it held. */
export function analyzeSpans(text: string, sink: TermSink): number {
  let run = 0;
  forEachRun(text, (start, end, cjk, ascii) => {
    if (cjk) cjkTerms(text, start, end, run, sink);
    else if (ascii) sink(stemWord(text.slice(start, end).toLowerCase()), start, end, run);
    else for (const t of wordTerms(text.slice(start, end))) sink(t, start, end, run);
    run++;
  });
  return run;
}

/** The terms of `text` as the index stores them: joined by single spaces. */
export function analyze(text: string): string {
  const out: string[] = [];
  analyzeSpans(text, (t) => out.push(t));
  return out.join(' ');
}

/** One query word or quoted run as index terms: a phrase, whose terms must be consecutive. */
export interface QueryPhrase {
  terms: string[];
  /** The last term matches any term it begins (FTS4 "term*"). */
  prefix: boolean;
  /** An unquoted CJK run: its pairs stand for words whose edges the query does not show. */
  cjk: boolean;
}

/**
 * The phrases a query asks for, analyzed as the index is: every word (a CJK run counts as one)
 * is a phrase, a "quoted run" one phrase, and `word*` keeps prefix search on the word folded
 * but not stemmed (a stem cut further than the typed prefix would miss words it begins). A CJK
 * run of one character asks for the terms it begins, since that character sits inside pairs.
 */
export function queryPhrases(query: string): QueryPhrase[] {
  const phrases: QueryPhrase[] = [];
  const parts = query.split('"');
  parts.forEach((part, i) => {
    const quoted = i % 2 === 1 && i < parts.length - 1;
    if (quoted) {
      const terms: string[] = [];
      analyzeSpans(part, (t) => terms.push(t));
      if (terms.length) phrases.push({ terms, prefix: false, cjk: false });
      return;
    }
    // Words with their trailing *, each analyzed alone.
    for (const m of part.matchAll(/[^\s"]+/g)) {
      const chunk = m[0];
      const byRun = new Map<number, { terms: string[]; end: number; cjk: boolean; word: string }>();
      analyzeSpans(chunk, (t, s, e, run) => {
        const r = byRun.get(run) ?? { terms: [], end: e, cjk: classOf(chunk.codePointAt(s) as number) === CJK, word: chunk.slice(s, e) };
        r.terms.push(t);
        r.end = e;
        byRun.set(run, r);
      });
      for (const r of byRun.values()) {
        const starred = chunk[r.end] === '*';
        if (starred && !r.cjk) {
          // The folded word, unstemmed, as a prefix; split parts before it stay whole terms.
          const folded = r.word.normalize('NFKD').replace(MARKS, '').toLowerCase().split(NOT_LETTERS).filter((t) => t !== '');
          if (folded.length) phrases.push({ terms: folded, prefix: true, cjk: false });
          continue;
        }
        const single = r.cjk && r.terms.length === 1 && [...(r.terms[0] as string)].length === 1;
        phrases.push({ terms: r.terms, prefix: starred || single, cjk: r.cjk });
      }
    }
  });
  return phrases;
}
