/**
 * Whether JavaScript's backtracking engine provably runs a pattern in linear time, with the same
 * answers RE2 gives: then lcm_grep runs it there, tens of times faster than RE2 as WebAssembly
 * (which copies each text into its heap and scans at ~15 MB/s).
 *
 * The class: alternatives of plain sequences of single-character atoms (a character, an escape
 * such as \d or \., a character class), each at most repeated an exact {n} times; only the last
 * atom of an alternative may repeat open-endedly (+, *, {n,}). No groups, no optional parts, no
 * lazy or ranged repeats. So an attempt from one position follows a single path: it steps
 * through at most FIXED_MAX characters (its fixed part) before it fails, or reaches the last
 * atom, whose run always succeeds; a text of n characters costs at most n × FIXED_MAX steps.
 *
 * Left out because the two engines read them differently: "." and \s (line terminators and
 * Unicode spaces), \w, \W, \b and \B under /i (JavaScript folds ſ and K into \w), ^ and $
 * under /m (JavaScript also breaks lines at \r), \p{…}, and RE2's own syntax ([[:alpha:]],
 * \A, \z, \Q…\E, \pL, \x{…}).
 */

/** The fixed characters one attempt may step through, over all alternatives. */
const FIXED_MAX = 256;
/** An exact repeat {n} counts n characters; past this it is left to RE2. */
const REPEAT_MAX = 64;

const SIMPLE_ESCAPES = new Set(['d', 'D', 't', 'n', 'r', 'f', 'v']);
const WORD_ESCAPES = new Set(['w', 'W', 'b', 'B']);

export function backtrackFree(source: string, flags: string): boolean {
  const ignoreCase = flags.includes('i');
  const multiline = flags.includes('m');
  let fixed = 0;
  let i = 0;
  let atBranchStart = true;
  const atBranchEnd = (at: number) => at >= source.length || source[at] === '|';
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '|') {
      i++;
      atBranchStart = true;
      continue;
    }
    if (c === '^' || c === '$') {
      if (multiline || (c === '^' ? !atBranchStart : !atBranchEnd(i + 1))) return false;
      i++;
      continue;
    }
    const end = atomEnd(source, i, ignoreCase);
    if (end < 0) return false;
    atBranchStart = false;
    if (c === '\\' && (source[i + 1] === 'b' || source[i + 1] === 'B')) {
      if (/^[{+*?]/.test(source[end] ?? '')) return false;
      i = end; // a word boundary: zero-width, no choices
      continue;
    }
    const q = source[end];
    if (q === '{') {
      const m = /^\{(\d+)(,?)\}/.exec(source.slice(end));
      if (!m) return false;
      const n = Number(m[1]);
      const afterRepeat = end + m[0].length;
      if (m[2]) {
        // {n,}: open-ended, so only as the alternative's last atom.
        if (!atBranchEnd(afterRepeat) || source[afterRepeat] === '?') return false;
      }
      if (n > REPEAT_MAX || source[afterRepeat] === '?') return false;
      fixed += n;
      i = afterRepeat;
    } else if (q === '+' || q === '*') {
      if (!atBranchEnd(end + 1)) return false;
      fixed += q === '+' ? 1 : 0;
      i = end + 1;
    } else if (q === '?') {
      return false;
    } else {
      fixed += 1;
      i = end;
    }
    if (fixed > FIXED_MAX) return false;
  }
  return true;
}

/** Where the single-character atom at `at` ends, or -1 when it is not one this class admits. */
function atomEnd(source: string, at: number, ignoreCase: boolean): number {
  const c = source[at] as string;
  if (c === '\\') return escapeEnd(source, at, ignoreCase, false);
  if (c === '[') {
    let i = at + 1;
    if (source[i] === '^') i++;
    if (source[i] === ']') i++;
    while (i < source.length && source[i] !== ']') {
      if (source[i] === '[') return -1; // RE2's [[:alpha:]], or a nested class
      if (source[i] === '\\') {
        i = escapeEnd(source, i, ignoreCase, true);
        if (i < 0) return -1;
      } else i++;
    }
    return i < source.length ? i + 1 : -1;
  }
  if ('()[]{}*+?.^$|'.includes(c)) return -1;
  // A surrogate pair is one character to both engines.
  const code = c.charCodeAt(0);
  return code >= 0xd800 && code <= 0xdbff ? at + 2 : at + 1;
}

function escapeEnd(source: string, at: number, ignoreCase: boolean, inClass: boolean): number {
  const e = source[at + 1];
  if (e === undefined) return -1;
  if (/[^A-Za-z0-9]/.test(e)) return at + 2;
  if (SIMPLE_ESCAPES.has(e)) return at + 2;
  if (WORD_ESCAPES.has(e)) return ignoreCase || (inClass && (e === 'b' || e === 'B')) ? -1 : at + 2;
  if (e === 'u' && /^[0-9A-Fa-f]{4}$/.test(source.slice(at + 2, at + 6))) return at + 6;
  if (e === 'x' && /^[0-9A-Fa-f]{2}$/.test(source.slice(at + 2, at + 4))) return at + 4;
  return -1;
}
