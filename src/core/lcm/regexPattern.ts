import { cjkTerms, forEachRun, wordTerms } from '../text/analyzer';
import { LinearRegex } from './linearRegex';

/**
 * lcm_grep's regex mode: RE2 regular expressions (linear time, see linearRegex.ts), and the
 * literal text every match must contain, so candidates can be narrowed by the FTS index or a
 * substring scan in SQLite before the regex runs.
 */
export interface CompiledPattern {
  regex: LinearRegex;
  /** Literals every match contains, longest first; empty when none can be proven. */
  literals: string[];
  caseInsensitive: boolean;
  /**
   * Whether a case-insensitive match of the literals can hold a non-ASCII character: RE2 folds
   * case by Unicode's rules, where ſ matches s and K (the Kelvin sign) matches k; no other
   * non-ASCII character folds into ASCII. ASCII-only checks (SQLite's lower(), the byte checks)
   * are exact only when this is false.
   */
  foldsBeyondAscii: boolean;
}

export const PATTERN_MAX = 500;

/**
 * `pattern`, or `/pattern/flags` with at least one flag (i, m, s, u) — so a path like /home/me/
 * stays a plain pattern. u changes nothing (RE2 always reads Unicode). Invalid patterns are
 * refused with the engine's own message. The caller disposes the compiled regex.
 */
export function compilePattern(pattern: string): CompiledPattern | { error: string } {
  const slashed = /^\/(.+)\/([a-z]+)$/s.exec(pattern);
  const source = slashed ? (slashed[1] as string) : pattern;
  const flags = slashed ? (slashed[2] as string) : '';
  const bad = flags.replace(/[imsu]/g, '');
  if (bad) return { error: `flag "${bad}" is not supported; use i, m, s or u` };
  const regex = LinearRegex.compile(source, [...new Set(flags.replace('u', ''))].join(''));
  if ('error' in regex) return regex;
  const caseInsensitive = flags.includes('i');
  // An inline flag group such as (?i) changes how the literals match: none are trusted then.
  const literals = /\(\?[a-zA-Z-]+[:)]/.test(source) || source.includes('\\Q') ? [] : requiredLiterals(source).sort((a, b) => b.length - a.length);
  return { regex, literals, caseInsensitive, foldsBeyondAscii: caseInsensitive && literals.some((l) => /[sk]/i.test(l)) };
}

/**
 * Literal runs that every match must contain. Conservative: a top-level alternation, an
 * optional atom or anything not understood ends a run, and only proven runs are returned.
 */
export function requiredLiterals(source: string): string[] {
  if (hasTopLevelAlternation(source)) return [];
  const out: string[] = [];
  let cur = '';
  const flush = () => {
    if (cur) out.push(cur);
    cur = '';
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    let literal: string | undefined;
    let inner: string[] = [];
    let next = i + 1;
    if (c === '\\') {
      const e = source[i + 1] ?? '';
      next = i + 2;
      if (e === 'n') literal = '\n';
      else if (e === 't') literal = '\t';
      else if (/[^A-Za-z0-9]/.test(e) && e !== '') literal = e;
      else if (/[pPuxck0]/.test(e)) next = skipEscape(source, i);
    } else if (c === '[') {
      next = skipClass(source, i);
    } else if (c === '(') {
      const end = matchingParen(source, i);
      if (end < 0) return [];
      const body = source.slice(i + 1, end);
      const stripped = body.replace(/^\?(:|P?<[A-Za-z_$][\w$]*>)/, '');
      // Any other "(?" group (lookaround, inline flags) is not understood: no literal is proven.
      if (stripped.startsWith('?')) return [];
      inner = requiredLiterals(stripped);
      next = end + 1;
    } else if (!'.^$|)*+?{}'.includes(c)) {
      literal = c;
    }
    const q = quantifier(source, next);
    if (literal !== undefined && q.min >= 1 && q.max === 1) {
      cur += literal;
    } else if (literal !== undefined && q.min >= 1) {
      cur += literal;
      flush();
    } else {
      flush();
      if (q.min >= 1) out.push(...inner);
    }
    i = q.end;
  }
  flush();
  return out.filter((l) => l.length > 0);
}

/** A prefix this short expands to many index terms ("1*" is every number starting with 1), so it narrows less than it costs. */
const usefulPrefix = (word: string): boolean => word.length >= (/^[0-9]+$/.test(word) ? 4 : 2);

/**
 * An FTS4 MATCH expression every text containing `literal` satisfies, over the analyzed index
 * (src/core/text/analyzer.ts, which folds case and diacritics, so it is a superset), or
 * undefined when the literal holds nothing the index can prove:
 * - a word bounded inside the literal is a whole word of any text holding the literal, whose
 *   terms are its analysis; a word at the literal's start may be the tail of a longer one and
 *   counts for nothing;
 * - a CJK run's character pairs are the text's pairs wherever the run lies, except the last
 *   character's when the run reaches the literal's end (marks in the text may join it), and a
 *   lone character is a term only when bounded on both sides;
 * - a word that runs to the literal's end begins a text's word X, whose term begins X (a stem
 *   is a prefix of its word): with a digit in it X is not stemmed and its term begins the word;
 *   else the term begins the word or is one of its shorter prefixes, an alternative of its own
 *   ANDed with the phrase (dropped when shorter than usefulPrefix allows, or not ASCII).
 * The terms that remain are one phrase: inside the literal only separators lie between them,
 * so in any text holding the literal they are adjacent terms, and a phrase narrows far more
 * than the same words anywhere. A \b in the pattern does not help: JavaScript's \b is
 * ASCII-only, so "é" + "clat" has a boundary the analyzer does not see, and trusting it would
 * drop real matches.
 */
export function ftsPrefilter(literal: string): string | undefined {
  const terms: string[] = [];
  let tail: string | undefined;
  const n = literal.length;
  forEachRun(literal, (start, end, cjk, ascii) => {
    if (cjk) {
      const pairs: string[] = [];
      cjkTerms(literal, start, end, 0, (t) => pairs.push(t));
      const lone = pairs.length === 1 && end - start <= 2 && [...(pairs[0] as string)].length === 1;
      if (lone) {
        if (start > 0 && end < n) terms.push(pairs[0] as string);
        return;
      }
      terms.push(...(end < n ? pairs : pairs.slice(0, -1)));
      return;
    }
    if (start === 0) return;
    const word = literal.slice(start, end);
    if (end < n) {
      terms.push(...wordTerms(word));
      return;
    }
    if (!ascii || !usefulPrefix(word)) return;
    const folded = word.toLowerCase();
    if (/[0-9]/.test(folded)) tail = `${folded}*`;
    else {
      const shorter = Array.from({ length: folded.length - 1 }, (_, k) => `"${folded.slice(0, k + 1)}"`);
      tail = `("${folded}*" OR ${shorter.join(' OR ')})`;
    }
  });
  if (tail?.endsWith('*') && !tail.startsWith('(')) return `"${[...terms, tail].join(' ')}"`;
  const phrase = terms.length ? `"${terms.join(' ')}"` : '';
  return [phrase, tail].filter((p) => p).join(' ') || undefined;
}

/** The regex construct a full_text pattern holds, if any; full_text searches words, not patterns. */
export function regexSyntaxIn(pattern: string): string | undefined {
  const checks: [RegExp, string][] = [
    [/\\[A-Za-z.\\()[\]{}|*+?^$/]/, 'a backslash escape'],
    [/\.[*+?]/, 'a wildcard (".*", ".+" or ".?")'],
    [/\[[^\]]*\]/, 'a character class'],
    [/[)\]][*+?]/, 'a quantified group or class'],
    [/\{\d+(,\d*)?\}/, 'a counted repetition'],
    [/\|/, 'an alternation "|"'],
    [/^\^|\$$/, 'an anchor ("^" or "$")'],
    [/\(\?/, 'a special group "(?"'],
  ];
  for (const [re, name] of checks) {
    const m = re.exec(pattern);
    if (m) return `${name}: "${m[0]}"`;
  }
  return undefined;
}

function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') i = skipClass(source, i) - 1;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

function quantifier(source: string, at: number): { min: number; max: number; end: number } {
  const c = source[at];
  let q = { min: 1, max: 1, end: at };
  if (c === '*') q = { min: 0, max: Infinity, end: at + 1 };
  else if (c === '+') q = { min: 1, max: Infinity, end: at + 1 };
  else if (c === '?') q = { min: 0, max: 1, end: at + 1 };
  else if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
    if (m) {
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] ? Number(m[3]) : Infinity;
      q = { min, max, end: at + m[0].length };
    }
  }
  if (q.end > at && source[q.end] === '?') q.end++; // lazy
  return q;
}

function skipClass(source: string, at: number): number {
  let i = at + 1;
  if (source[i] === '^') i++;
  if (source[i] === ']') i++;
  for (; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source.startsWith('[:', i) && source.indexOf(':]', i + 2) > 0) i = source.indexOf(':]', i + 2) + 1; // RE2's [[:alpha:]]
    else if (source[i] === ']') return i + 1;
  }
  return source.length;
}

function skipEscape(source: string, at: number): number {
  const e = source[at + 1];
  const rest = source.slice(at + 2);
  if ((e === 'p' || e === 'P' || e === 'u' || e === 'k' || e === 'x') && rest.startsWith('{')) return at + 2 + rest.indexOf('}') + 1;
  if (e === '0') return at + 2 + (/^[0-7]{0,2}/.exec(rest)?.[0].length ?? 0); // an octal code
  // RE2's one-letter class, \pL.
  if (e === 'p' || e === 'P') return at + 3;
  if (e === 'k' && rest.startsWith('<')) return at + 2 + rest.indexOf('>') + 1;
  if (e === 'u') return at + 6;
  if (e === 'x') return at + 4;
  if (e === 'c') return at + 3;
  return at + 2;
}

function matchingParen(source: string, at: number): number {
  let depth = 0;
  for (let i = at; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') i = skipClass(source, i) - 1;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}
