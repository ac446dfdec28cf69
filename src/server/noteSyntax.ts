import type { IdKind } from './protocol';

/**
 * How memory ids and names appear in a note's text. Pure functions over lines, so the server's
 * features and their tests share one reading of the syntax.
 */

export interface IdRef {
  kind: IdKind;
  id: string;
  line: number;
  start: number;
  end: number;
}

// The character before an id may not continue a word, path or URL ("https://…note:x" is no id).
const BEFORE = String.raw`(?<![\w/.:#-])`;
const PATH_CHAR = String.raw`[^\s<>()\[\]{}"'\x60|#]`;
/** fact:<id> · entry:<vault path>#<hash> · note:<vault path ending .md> */
const ID_PATTERN = new RegExp(`${BEFORE}(?:fact:[A-Za-z0-9_-]+|entry:${PATH_CHAR}+#[A-Za-z0-9]+|note:${PATH_CHAR}+\\.md)`, 'g');

export function idsInLine(text: string, line: number): IdRef[] {
  const out: IdRef[] = [];
  for (const m of text.matchAll(ID_PATTERN)) {
    const id = m[0];
    const start = m.index;
    out.push({ kind: id.slice(0, id.indexOf(':')) as IdKind, id, line, start, end: start + id.length });
  }
  return out;
}

/** The id under the cursor: a cursor just after the last character still counts. */
export function idAt(text: string, line: number, character: number): IdRef | undefined {
  return idsInLine(text, line).find((r) => character >= r.start && character <= r.end);
}

export interface FrontMatterField {
  key: string;
  value: string;
  line: number;
  /** Character where the (unquoted) value starts. */
  valueStart: number;
}

export interface FrontMatter {
  /** Line of the closing `---`. */
  end: number;
  fields: FrontMatterField[];
}

const FRONT_MATTER_MAX_LINES = 200;

/** YAML-style front matter's top-level `key: value` lines; nested YAML is not read. */
export function frontMatter(lines: readonly string[]): FrontMatter | undefined {
  if (lines[0]?.trimEnd() !== '---') return undefined;
  const fields: FrontMatterField[] = [];
  for (let i = 1; i < Math.min(lines.length, FRONT_MATTER_MAX_LINES); i++) {
    const text = lines[i] ?? '';
    if (/^(---|\.\.\.)\s*$/.test(text)) return { end: i, fields };
    const m = /^([A-Za-z_][\w-]*)\s*:[ \t]*(.*?)\s*$/.exec(text);
    if (!m) continue;
    const raw = m[2] ?? '';
    const quoted = /^(["'])(.*)\1$/.exec(raw);
    const value = quoted ? (quoted[2] ?? '') : raw;
    let start = text.indexOf(':') + 1;
    while (text[start] === ' ' || text[start] === '\t') start++;
    fields.push({ key: m[1] ?? '', value, line: i, valueStart: start + (quoted ? 1 : 0) });
  }
  return undefined;
}

export type CompletionContext =
  | { type: 'id'; kind: IdKind; prefix: string; start: number }
  | { type: 'entity'; prefix: string; start: number }
  | { type: 'predicate'; prefix: string; start: number }
  | { type: 'word'; prefix: string; start: number };

/** While typing an entry id the `#` is part of it. */
const ID_PREFIX_CHAR = String.raw`[^\s<>()\[\]{}"'\x60|]`;
const ID_BEFORE_CURSOR = new RegExp(`${BEFORE}(fact|entry|note):(${ID_PREFIX_CHAR}*)$`);
const WORD_BEFORE_CURSOR = /[\p{L}\p{N}_][\p{L}\p{N}_.\-]*$/u;

/**
 * What is being typed at the cursor: an id after `fact:`/`entry:`/`note:`, an entity inside
 * `[[…`, a subject or predicate as a front-matter value, or else a word.
 * `frontMatterKey` is the key of the front-matter line the cursor is on, if any.
 */
export function completionContext(text: string, character: number, frontMatterKey?: string): CompletionContext {
  const before = text.slice(0, character);
  const id = ID_BEFORE_CURSOR.exec(before);
  if (id) return { type: 'id', kind: id[1] as IdKind, prefix: id[2] ?? '', start: id.index };
  const link = /\[\[([^[\]]*)$/.exec(before);
  if (link) return { type: 'entity', prefix: link[1] ?? '', start: link.index + 2 };
  if (frontMatterKey === 'subject' || frontMatterKey === 'predicate') {
    const value = /:[ \t]*["']?(.*)$/.exec(before);
    if (value) {
      const prefix = value[1] ?? '';
      return { type: frontMatterKey === 'subject' ? 'entity' : 'predicate', prefix, start: character - prefix.length };
    }
  }
  const word = WORD_BEFORE_CURSOR.exec(before);
  return { type: 'word', prefix: word?.[0] ?? '', start: word ? word.index : character };
}

export interface Phrase {
  text: string;
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}_](?:[\p{L}\p{N}_'’.\-/]*[\p{L}\p{N}_])?/gu;
/** Subjects are names, rarely sentences: phrases up to this many words are tried. */
const PHRASE_WORDS = 6;

/**
 * Phrases under the cursor that could be a fact's subject, best first: the `[[link]]` or
 * front-matter `subject:` value the cursor is in, then runs of words around it, longest first.
 */
export function subjectCandidates(text: string, character: number, frontMatterField?: FrontMatterField): Phrase[] {
  const out: Phrase[] = [];
  for (const m of text.matchAll(/\[\[([^[\]]+)\]\]/g)) {
    if (character >= m.index && character <= m.index + m[0].length) out.push({ text: m[1] ?? '', start: m.index + 2, end: m.index + 2 + (m[1] ?? '').length });
  }
  if (frontMatterField && (frontMatterField.key === 'subject' || frontMatterField.key === 'entity') && character >= frontMatterField.valueStart) {
    out.push({ text: frontMatterField.value, start: frontMatterField.valueStart, end: frontMatterField.valueStart + frontMatterField.value.length });
  }
  const words = [...text.matchAll(WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const k = words.findIndex((w) => character >= w.start && character <= w.end);
  if (k !== -1) {
    const spans: Phrase[] = [];
    for (let i = Math.max(0, k - PHRASE_WORDS + 1); i <= k; i++) {
      for (let j = k; j < Math.min(words.length, i + PHRASE_WORDS); j++) {
        const start = words[i]!.start;
        const end = words[j]!.end;
        spans.push({ text: text.slice(start, end), start, end });
      }
    }
    spans.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
    out.push(...spans);
  }
  return out;
}
