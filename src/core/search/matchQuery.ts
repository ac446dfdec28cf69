/**
 * Turns what a person or a model typed into an FTS4 MATCH expression that cannot inject
 * operators: every word becomes a quoted phrase, "quoted runs" stay phrases, a trailing *
 * on a word keeps prefix search, and everything else (NEAR, OR, -, column:, parentheses) is
 * plain text. All phrases must match, as with FTS5's default.
 */
export interface ParsedQuery {
  match: string;
  /** Each phrase as its list of words, for highlighting and for the FTS5 baseline. */
  phrases: string[][];
}

const WORD = /[\p{L}\p{N}\p{M}_]+\*?/gu;

export function parseMatchQuery(text: string): ParsedQuery | undefined {
  const phrases: { words: string[]; prefix: boolean }[] = [];
  const parts = text.split('"');
  parts.forEach((part, i) => {
    const quoted = i % 2 === 1 && i < parts.length - 1;
    const words = [...part.matchAll(WORD)].map((m) => m[0]);
    if (quoted) {
      const clean = words.map((w) => w.replace(/\*$/, ''));
      if (clean.length) phrases.push({ words: clean, prefix: false });
      return;
    }
    for (const w of words) {
      const prefix = w.endsWith('*');
      const word = prefix ? w.slice(0, -1) : w;
      if (word) phrases.push({ words: [word], prefix });
    }
  });
  if (!phrases.length) return undefined;
  const match = phrases.map((p) => `"${p.words.join(' ')}${p.prefix ? '*' : ''}"`).join(' ');
  return { match, phrases: phrases.map((p) => p.words) };
}
