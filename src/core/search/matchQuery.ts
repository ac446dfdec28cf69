import { analyze, queryPhrases } from '../text/analyzer';

/**
 * Turns what a person or a model typed into an FTS4 MATCH expression over the analyzed index
 * (src/core/text/analyzer.ts) that cannot inject operators: every word becomes a quoted phrase
 * of its index terms (a CJK run the phrase of its character pairs), "quoted runs" stay
 * phrases, a trailing * on a word keeps prefix search, and everything else (NEAR, OR, -,
 * column:, parentheses) is plain text. All phrases must match, as with FTS5's default.
 */
export interface ParsedQuery {
  match: string;
  /** Each phrase as its list of index terms, for highlighting and for the FTS5 baseline. */
  phrases: string[][];
  /**
   * Any part may match instead of every one: the words, and each pair of a CJK run on its own
   * (a sentence typed without spaces holds words the query cannot see the edges of), OR'ed.
   */
  anyMatch: string;
}

/**
 * A typed prefix of one English word ("stagin*" while "staging" is typed) also matches the
 * stems the words it begins may have ("stag"): a stem is a prefix of its word, shorter than
 * what was typed when the typing has reached the suffix. The stems are found by finishing the
 * prefix with the English endings the stemmer removes, and with every tail of one (the typing
 * may stop inside it: "configura" is finished by "tion", "caref" by "ul"), and analysing each;
 * a shorter prefix that no such word stems to ("sta", the stem of "stays") is not searched.
 */
const WHOLE_ENDINGS = [
  'e', 's', 'es', 'ed', 'ing', 'ings', 'ly', 'er', 'ers', 'est', 'ies', 'ied', 'ying',
  'ation', 'ations', 'ational', 'ization', 'izations', 'ize', 'izes', 'ized', 'izing', 'ise', 'ised', 'ising',
  'ion', 'ions', 'ness', 'nesses', 'ment', 'ments', 'ement', 'al', 'ally', 'ity', 'ities', 'ive', 'ively', 'iveness',
  'ful', 'fully', 'fulness', 'ous', 'ously', 'ousness', 'able', 'ably', 'ability', 'ible', 'ance', 'ence', 'ency', 'ancy',
  'ant', 'ent', 'ently', 'ism', 'ist', 'ists', 'ic', 'ical', 'ically', 'ate', 'ates', 'ated', 'ating', 'ator', 'ators',
];
const ENDINGS = [...new Set(['', ...WHOLE_ENDINGS.flatMap((e) => Array.from({ length: e.length }, (_, i) => e.slice(i)))])];

const quote = (terms: readonly string[], prefix: boolean) => {
  const only = terms.length === 1 ? (terms[0] as string) : '';
  if (!prefix || !/^[a-z]+$/.test(only)) return `"${terms.join(' ')}${prefix ? '*' : ''}"`;
  const stems = [...new Set(ENDINGS.map((e) => analyze(only + e)).filter((t) => t.length < only.length && only.startsWith(t) && t.length > 0))].sort();
  if (!stems.length) return `"${only}*"`;
  return `("${only}*" OR ${stems.map((t) => `"${t}"`).join(' OR ')})`;
};

export function parseMatchQuery(text: string): ParsedQuery | undefined {
  const phrases = queryPhrases(text);
  if (!phrases.length) return undefined;
  const match = phrases.map((p) => quote(p.terms, p.prefix)).join(' ');
  const loose = new Set<string>();
  for (const p of phrases) {
    if (p.cjk && p.terms.length > 1) for (const t of p.terms) loose.add(quote([t], false));
    else loose.add(quote(p.terms, p.prefix));
  }
  return { match, phrases: phrases.map((p) => p.terms), anyMatch: [...loose].join(' OR ') };
}
