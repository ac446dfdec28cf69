import { RE2 } from 're2-wasm';
import { backtrackFree } from './backtrackFree';

/**
 * Regular expressions in linear time: Google's RE2 (as WebAssembly), so a pattern such as
 * (a|a)*$ costs one pass over the text instead of the exponential backtracking of JavaScript's
 * engine. RE2 lacks the constructs that need backtracking (lookaround, backreferences); those
 * are refused by name before RE2 sees the pattern.
 *
 * The WebAssembly build has a fixed 16 MB heap that cannot grow, and running out of it kills
 * the module for the life of the process. So the engine never sees more than WINDOW_MAX
 * characters of a text at once: a long text is searched in windows that overlap by OVERLAP, and
 * a match is found whole when it is at most OVERLAP characters long. Each compiled pattern holds
 * heap memory until `dispose`, which its owner calls when its search ends.
 *
 * A pattern that JavaScript's own engine provably runs in linear time with RE2's answers
 * (backtrackFree.ts: plain sequences, no groups or optional parts) runs there instead, over the
 * whole text at once; RE2 accepts every such pattern too, so both paths take one language.
 */

/** Characters handed to the engine at most at once: at 4 UTF-8 bytes per pair of UTF-16 units at worst, under 1 MiB. */
export const WINDOW_MAX = 256 * 1024;
/** A match up to this long is found whole wherever it lies; a longer one may be found shortened or missed where two windows meet. */
export const OVERLAP = 8 * 1024;
/** The first window of a search that starts inside a text: short, so counting many nearby matches does not copy the text over and over. */
const WINDOW_FIRST = 2 * OVERLAP;

/** The compiled program inside re2-wasm's RE2 (an embind object: freed by delete()). */
interface Engine {
  match(input: string, startCodePoint: number, captureGroups: boolean): { match: string; index: number };
  delete(): void;
}

const SURROGATE = /[\uD800-\uDFFF]/;

export interface Match {
  /** UTF-16 offsets into the text, as String.prototype.slice takes them. */
  index: number;
  length: number;
}

/** Constructs RE2 cannot run because they need backtracking, with the name a refusal gives them. */
const UNSUPPORTED: [RegExp, string][] = [
  [/\(\?<[=!]/, 'a lookbehind "(?<=" or "(?<!"'],
  [/\(\?[=!]/, 'a lookahead "(?=" or "(?!"'],
  [/\\[1-9]/, 'a backreference "\\1"…"\\9"'],
  [/\\k</, 'a named backreference "\\k<name>"'],
];

/** The unsupported construct `source` holds (escapes and classes skipped), if any. */
export function unsupportedConstruct(source: string): string | undefined {
  // Blank out escaped characters that are not themselves the construct, and character classes, so "\(?=" or "[(?=]" are not flagged.
  const plain = source.replace(/\\([^1-9k])/g, '__').replace(/\[(?:\\.|[^\]\\])*\]/g, (m) => '_'.repeat(m.length));
  for (const [re, name] of UNSUPPORTED) if (re.test(plain)) return name;
  return undefined;
}

/**
 * Compiled patterns alive at once, at most: each holds its program and, once used, search
 * caches in the shared heap. Refusing one more is recoverable; exhausting the heap is not.
 */
const MAX_LIVE = 48;
let live = 0;

export class LinearRegex {
  private disposed = false;
  private re2Tried = false;

  /** Which engine runs the searches (see backtrackFree.ts). */
  get engineName(): 'javascript' | 're2' {
    return this.js ? 'javascript' : 're2';
  }

  private constructor(
    private engine: Engine | undefined,
    private readonly js: RegExp | undefined,
    readonly source: string,
    readonly flags: string,
  ) {}

  /** `flags` among i, m, s; the engine's own message when RE2 refuses the pattern. `alwaysRe2` (tests) keeps the RE2 path for every pattern. */
  static compile(source: string, flags: string, alwaysRe2 = false): LinearRegex | { error: string } {
    const construct = unsupportedConstruct(source);
    if (construct) return { error: `it holds ${construct}, which the linear-time engine (RE2) cannot run; rewrite the pattern without it` };
    // Every pattern this class admits is one RE2 takes too, so its syntax needs no second check.
    const js = !alwaysRe2 && backtrackFree(source, flags) ? jsRegex(source, flags) : undefined;
    if (js) return new LinearRegex(undefined, js, source, flags);
    if (live >= MAX_LIVE) return { error: `${live} regular expressions are in use at once, the most the engine's memory holds; try again when a search has finished` };
    let re: RE2;
    try {
      re = new RE2(source, `g${flags}u`);
    } catch (err) {
      const message = (err as Error).message;
      if (message.includes('abort(')) throw new Error(`the regex engine (RE2) failed: ${message.slice(0, 200)}`);
      return { error: `not a valid regular expression (RE2 syntax): ${message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')}` };
    }
    live++;
    // re2-wasm's RE2 class translates JavaScript syntax and checks the pattern; its compiled
    // program is reached directly, to search without capture groups (which cost RE2 a far slower
    // engine: ~50 s instead of ~0.1 s for (.*a){20} over 256 K characters) and to be freed.
    return new LinearRegex((re as unknown as { wrapper: Engine }).wrapper, undefined, source, flags);
  }

  /** The first match at or after `from` (a UTF-16 offset), or null. */
  firstMatch(text: string, from = 0): Match | null {
    if (this.disposed) throw new Error('LinearRegex: used after dispose');
    // JavaScript's cost is bounded per character (backtrackFree.ts), but by a constant of up to
    // a few hundred steps: a text this long goes to RE2, whose answers are the same.
    if (this.js && text.length > JS_TEXT_MAX && !this.engine && !this.re2Tried) {
      this.re2Tried = true;
      this.engine = re2Engine(this.source, this.flags);
    }
    if (this.js && (text.length <= JS_TEXT_MAX || !this.engine)) {
      this.js.lastIndex = from;
      const m = this.js.exec(text);
      return m ? { index: m.index, length: m[0].length } : null;
    }
    let start = from;
    let size = from === 0 ? WINDOW_MAX : WINDOW_FIRST;
    while (start <= text.length) {
      // One character of context before the window, so ^, $ and \b see what lies before it; the search starts after it.
      const context = start === 0 ? 0 : isLowSurrogate(text, start - 1) && start >= 2 ? 2 : 1;
      const end = clampEnd(text, Math.min(text.length, start + size));
      const found = this.search(text.slice(start - context, end), context > 0 ? 1 : 0);
      if (found) {
        const index = start - context + found.index;
        // Whole when it starts at least OVERLAP before the window's end, or the window reaches the text's end.
        if (end === text.length || index + OVERLAP <= end) return { index, length: found.length };
        // Too near the end to be sure: the same start again with a wider window.
        if (size < WINDOW_MAX) {
          size = Math.min(WINDOW_MAX, size * 2);
          continue;
        }
      } else if (end === text.length) {
        return null;
      }
      // No whole match starts before end - OVERLAP: the next window begins there.
      start = Math.max(start + 1, clampEnd(text, end - OVERLAP));
      size = Math.min(WINDOW_MAX, size * 2);
    }
    return null;
  }

  /** Frees the engine's heap memory; the regex cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (!this.engine) return;
    live--;
    // re2-wasm never frees its compiled program (no finalizer in this build), so it is freed here.
    this.engine.delete();
  }

  /** One engine call on a piece of at most WINDOW_MAX (+2) characters, starting at `fromCodePoint`; offsets back in UTF-16 units. */
  private search(piece: string, fromCodePoint: number): Match | null {
    const m = (this.engine as Engine).match(piece, fromCodePoint, false);
    if (m.index < 0) return null;
    // RE2 counts code points; a surrogate pair is one of them but two UTF-16 units.
    return { index: SURROGATE.test(piece) ? utf16Offset(piece, m.index) : m.index, length: m.match.length };
  }
}

/** Texts longer than this run on RE2 even when JavaScript's engine may run the pattern. */
const JS_TEXT_MAX = 1024 * 1024;

/** A backtrack-free pattern's RE2 program, for a long text; undefined when the heap holds no more (JavaScript then runs it). */
function re2Engine(source: string, flags: string): Engine | undefined {
  if (live >= MAX_LIVE) return undefined;
  try {
    const engine = (new RE2(source, `g${flags}u`) as unknown as { wrapper: Engine }).wrapper;
    live++;
    return engine;
  } catch {
    return undefined;
  }
}

/** The pattern as a JavaScript regex read as Unicode, as RE2 reads it; undefined when JavaScript refuses it (u mode refuses escapes such as \: that RE2 takes). */
function jsRegex(source: string, flags: string): RegExp | undefined {
  try {
    return new RegExp(source, `g${flags}u`);
  } catch {
    return undefined;
  }
}

function isLowSurrogate(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c >= 0xdc00 && c <= 0xdfff;
}

/** `end`, moved back one unit when it would split a surrogate pair. */
function clampEnd(text: string, end: number): number {
  return end > 0 && end < text.length && isLowSurrogate(text, end) && isHighSurrogate(text, end - 1) ? end - 1 : end;
}

function isHighSurrogate(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c >= 0xd800 && c <= 0xdbff;
}

/** The UTF-16 offset of the `codePoints`-th code point of `text` (a lone surrogate counts as one). */
export function utf16Offset(text: string, codePoints: number): number {
  let i = 0;
  for (let n = 0; n < codePoints && i < text.length; n++) i += isHighSurrogate(text, i) && isLowSurrogate(text, i + 1) ? 2 : 1;
  return i;
}
