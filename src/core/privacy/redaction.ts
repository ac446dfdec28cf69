import { extraPatternRule } from './extraPatterns';
import { labelOf, secretRules, URL_PASSWORD_RULES } from './secretRules';
import { SecretScanner, type Finding } from './secretScanner';
import { lastAtOrBefore } from '../search/intList';

/** What a person decides about redaction: their own patterns, and the scopes where secrets are kept as written. */
export interface RedactionSettings {
  extraPatterns: readonly string[];
  /** Memory scopes (`global`, `project:<slug>`) and `history` (imported transcripts and the tool-call log). */
  disabledScopes: readonly string[];
}

/** The scope of everything that is not memory: imported transcripts and Recollect's own tool-call log. */
export const HISTORY_SCOPE = 'history';

export const NO_REDACTION_SETTINGS: RedactionSettings = { extraPatterns: [], disabledScopes: [] };

/** The placeholder kept where a secret was. */
export function placeholder(label: string): string {
  return `[redacted: ${label}]`;
}

/**
 * Texts scanned together are joined by this: a newline ends every match that stops
 * at whitespace or line ends, and NUL is in no rule's character set, so a match rarely spans two
 * texts, and one that does is found again by linting those texts alone.
 */
const SEPARATOR = '\n\u0000\n';
/**
 * Each scan runs every rule's regular expressions over the whole text once, a cost per call
 * besides the cost per character, so a file's texts are scanned together (one call per file, not
 * per event). The cap bounds the joined string.
 */
const BATCH_CHARS = 8 * 1024 * 1024;
/** A data value this short is not searched for (a rule's `typeName` and the like are longer than any real hit's context anyway). */
const MIN_VALUE = 8;

interface Span {
  start: number;
  end: number;
  label: string;
  /** Of two rules reporting the same characters, the lower rank names the placeholder (a GitHub token over a URL's password). */
  rank: number;
}

/** `scheme://user:password@`: the password's place in a URL a rule reported whole. */
const URL_PASSWORD = /^[^:\s]*:\/\/[^:/\s@]*:([^@/\s]+)@/;

/**
 * Secret detection on every write path: texts in, the same texts out with each secret replaced
 * by `[redacted: <what it was>]`, before anything reaches the journal, the index, a blob or the
 * vault. The settings are read on each call, so a changed setting applies to the next write.
 */
export class Redaction {
  private compiled: { key: string; scanner: SecretScanner } | undefined;

  constructor(
    private readonly settings: RedactionSettings | (() => RedactionSettings) = NO_REDACTION_SETTINGS,
    /** Told once per pattern list about each extra pattern that cannot be used. */
    private readonly warn: (problem: string) => void = () => undefined,
  ) {}

  enabledFor(scope: string): boolean {
    return !this.current().disabledScopes.includes(scope);
  }

  /** The texts with their secrets replaced, in order; unchanged where `scope` has redaction turned off. */
  async texts(texts: readonly string[], scope: string): Promise<string[]> {
    if (!this.enabledFor(scope)) return [...texts];
    const spans = await this.find(texts);
    return texts.map((t, i) => applySpans(t, spans[i] ?? []));
  }

  async text(text: string, scope: string): Promise<string> {
    return (await this.texts([text], scope))[0] as string;
  }

  /**
   * Every string inside a JSON-shaped value (object keys excepted), redacted in one call; the
   * value's shape is kept. A string is also read after the name it stands under, where that name
   * says secret (`{"password": "hunter2-x"}`, or a fact's `object` under its `predicate`
   * "password"), since such a value alone looks like nothing.
   */
  async value<T>(value: T, scope: string): Promise<T> {
    const slots = new StringSlots();
    const shaped = slots.collect(value, undefined);
    const texts = slots.slots.flatMap((s) => (s.frame === undefined ? [s.text] : [s.text, `${s.frame}: ${s.text}`]));
    const redacted = await this.texts(texts, scope);
    let at = 0;
    const out = slots.slots.map((s) => {
      const alone = redacted[at++] as string;
      if (s.frame === undefined) return alone;
      const framed = redacted[at++] as string;
      const prefix = `${s.frame}: `;
      return framed.startsWith(prefix) ? framed.slice(prefix.length) : alone;
    });
    return slots.fill(shaped, out) as T;
  }

  private current(): RedactionSettings {
    return typeof this.settings === 'function' ? this.settings() : this.settings;
  }

  /** The rules, created once per list of extra patterns. */
  private async scanner(): Promise<SecretScanner> {
    const { extraPatterns } = this.current();
    const key = JSON.stringify(extraPatterns);
    if (this.compiled?.key !== key) {
      const extra = await extraPatternRule(extraPatterns);
      for (const p of extra.problems) this.warn(p);
      this.compiled = { key, scanner: new SecretScanner(secretRules(extra.rule ? [extra.rule] : [])) };
    }
    return this.compiled.scanner;
  }

  /** The secret spans of each text: texts are linted in batches; those a batch match spans are linted alone. */
  private async find(texts: readonly string[]): Promise<Span[][]> {
    const scanner = await this.scanner();
    const spans: Span[][] = texts.map(() => []);
    let from = 0;
    while (from < texts.length) {
      let to = from;
      let chars = 0;
      while (to < texts.length && (to === from || chars + (texts[to] as string).length <= BATCH_CHARS)) chars += (texts[to++] as string).length + SEPARATOR.length;
      const starts: number[] = [];
      let at = 0;
      for (let i = from; i < to; i++) {
        starts.push(at);
        at += (texts[i] as string).length + SEPARATOR.length;
      }
      const alone = new Set<number>();
      for (const m of lint(scanner, texts.slice(from, to).join(SEPARATOR))) {
        const first = from + lastAtOrBefore(starts, m.range[0]);
        const last = from + lastAtOrBefore(starts, Math.max(m.range[0], m.range[1] - 1));
        const base = starts[first - from] as number;
        const text = texts[first] as string;
        if (first !== last || m.range[1] - base > text.length) {
          for (let i = first; i <= last; i++) alone.add(i);
          continue;
        }
        (spans[first] as Span[]).push(spanOf(text, m.range[0] - base, m.range[1] - base, m));
      }
      for (const i of alone) {
        const text = texts[i] as string;
        spans[i] = lint(scanner, text).map((m) => spanOf(text, m.range[0], m.range[1], m));
      }
      from = to;
    }
    return spans;
  }
}

function lint(scanner: SecretScanner, content: string): Finding[] {
  return content.trim() ? scanner.scan(content) : [];
}

/**
 * Where the secret itself is. A rule reports the secret among its data; where that value lies
 * across the reported range it is what is replaced (the AWS rule's range starts at the key's
 * name and stops 40 characters later, short of the key's end). Otherwise the range is.
 */
function spanOf(text: string, start: number, end: number, m: Finding): Span {
  let lo = start;
  let hi = end;
  let found = false;
  for (const v of Object.values(m.data ?? {})) {
    if (typeof v !== 'string' || v.length < MIN_VALUE) continue;
    for (let i = text.indexOf(v, Math.max(0, start - v.length)); i !== -1 && i < end; i = text.indexOf(v, i + 1)) {
      if (i + v.length <= start) continue;
      lo = found ? Math.min(lo, i) : i;
      hi = found ? Math.max(hi, i + v.length) : i + v.length;
      found = true;
    }
  }
  if (URL_PASSWORD_RULES.has(m.messageId)) {
    const url = URL_PASSWORD.exec(text.slice(lo, hi));
    if (url) return { start: lo + url[0].length - 1 - (url[1] as string).length, end: lo + url[0].length - 1, label: labelOf(m.messageId), rank: 1 };
  }
  return { start: lo, end: hi, label: labelOf(m.messageId), rank: 0 };
}

/** The text with each span replaced by its placeholder; overlapping spans become one, named by the first (then the lowest rank). */
function applySpans(text: string, spans: readonly Span[]): string {
  if (!spans.length) return text;
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end || a.rank - b.rank);
  let out = '';
  let at = 0;
  for (const s of sorted) {
    if (s.end <= at) continue;
    if (s.start >= at) {
      out += text.slice(at, s.start) + placeholder(s.label);
    }
    at = Math.max(at, s.end);
  }
  return out + text.slice(at);
}

/** A name under which a value may be a secret that needs the name to be recognised. */
const SECRET_NAME = /pass(?:word|phrase)|secret|token|credential|api[_-]?key/i;

/** The strings of a JSON-shaped value, gathered in order with the name each one stands under when it says secret, and the value rebuilt with replacements. */
class StringSlots {
  readonly slots: { text: string; frame: string | undefined }[] = [];

  collect(value: unknown, frame: string | undefined): unknown {
    if (typeof value === 'string') {
      this.slots.push({ text: value, frame });
      return new Slot(this.slots.length - 1);
    }
    if (Array.isArray(value)) return value.map((v) => this.collect(v, frame));
    if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const predicate = typeof record.predicate === 'string' && SECRET_NAME.test(record.predicate) ? record.predicate : undefined;
      return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, this.collect(v, k === 'object' && predicate ? predicate : SECRET_NAME.test(k) ? k : undefined)]));
    }
    return value;
  }

  fill(shaped: unknown, strings: readonly string[]): unknown {
    if (shaped instanceof Slot) return strings[shaped.index];
    if (Array.isArray(shaped)) return shaped.map((v) => this.fill(v, strings));
    if (shaped !== null && typeof shaped === 'object') return Object.fromEntries(Object.entries(shaped).map(([k, v]) => [k, this.fill(v, strings)]));
    return shaped;
  }
}

class Slot {
  constructor(readonly index: number) {}
}
