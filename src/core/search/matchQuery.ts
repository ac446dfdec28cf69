import { queryPhrases } from '../text/analyzer';

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

const quote = (terms: readonly string[], prefix: boolean) => `"${terms.join(' ')}${prefix ? '*' : ''}"`;

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
