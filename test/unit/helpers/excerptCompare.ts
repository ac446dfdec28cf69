import { analyze } from '../../../src/core/text/analyzer';

/**
 * Excerpts are compared with SQLite's own snippet() of the indexed terms column: the rules
 * that pick and cut fragments are FTS4's, over the same terms, so an excerpt of the original
 * text, analyzed again, must give the terms SQLite's fragment shows, its highlighted pieces the
 * terms SQLite highlights, and its ellipses fall where SQLite's do. Markers are control
 * characters, which the analyzer reads as separators and real texts do not hold.
 */
export const OPEN = '\u0002';
export const CLOSE = '\u0003';
export const ELLIPSIS = '\u0004';

const HIT = new RegExp(`${OPEN}([^${CLOSE}]*)${CLOSE}`, 'g');

function shape(excerpt: string, terms: (s: string) => string[]) {
  return {
    fragments: excerpt.split(ELLIPSIS).map((f) => terms(f).join(' ')),
    hits: [...excerpt.matchAll(HIT)].flatMap((m) => terms(m[1] as string)),
  };
}

/** What an excerpt of the original text shows, in the index's terms. */
export function originalShape(excerpt: string) {
  return shape(excerpt, (s) => analyze(s).split(' ').filter((t) => t !== ''));
}

/** What SQLite's snippet() of the terms column shows. */
export function termShape(excerpt: string) {
  return shape(excerpt, (s) => s.split(/[\s\u0002\u0003]+/).filter((t) => t !== ''));
}
