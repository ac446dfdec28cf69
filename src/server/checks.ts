import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import { parseFrontMatter } from '../core/memory/vault/frontMatter';
import { textProblem } from '../core/text/textRules';
import { frontMatter, idsInLine, type IdRef } from './noteSyntax';
import type { IdTarget } from './protocol';

export const SOURCE = 'recollect';

/** A note with thousands of bad characters needs a few marks, not thousands. */
const CHARACTER_MARKS_MAX = 100;
/** The store forgives a date this far ahead (clocks of two processes differ a little). */
const FUTURE_SLACK_MS = 2_000;

export interface CheckOptions {
  statementMax: number;
  now: number;
}

/**
 * What the store would refuse or change in this text, found without asking the store:
 * control characters and invalid Unicode, a line over the statement limit, and a front-matter
 * date in the future. The rules are the store's own (textProblem, the statement limit).
 */
export function localProblems(lines: readonly string[], opts: CheckOptions): Diagnostic[] {
  const out: Diagnostic[] = [];
  let marks = 0;
  lines.forEach((text, line) => {
    if (marks < CHARACTER_MARKS_MAX && textProblem('line', text)) {
      for (const mark of badCharacters(text, line)) {
        if (marks++ >= CHARACTER_MARKS_MAX) break;
        out.push(mark);
      }
    }
    if (text.length > opts.statementMax) {
      out.push({
        severity: DiagnosticSeverity.Error,
        source: SOURCE,
        code: 'line-too-long',
        range: { start: { line, character: opts.statementMax }, end: { line, character: text.length } },
        message: `This line has ${text.length.toLocaleString('en')} characters; the store refuses a statement or line over ${opts.statementMax.toLocaleString('en')} (it is refused, never cut). Split it.`,
      });
    }
  });
  const date = futureDate(lines, opts.now);
  if (date) out.push(date);
  return out;
}

/**
 * The date the store would read from the front matter (the vault's own reader: session_date,
 * else date), marked when it is later than now and so would be replaced by the write time.
 */
function futureDate(lines: readonly string[], now: number): Diagnostic | undefined {
  const fm = frontMatter(lines);
  if (!fm) return undefined;
  const at = parseFrontMatter(lines.slice(0, fm.end + 1).join('\n')).date;
  if (at === undefined || at <= now + FUTURE_SLACK_MS) return undefined;
  const find = (key: string) => fm.fields.find((f) => f.key.toLowerCase() === key && f.value.trim() !== '');
  const f = find('session_date') ?? find('date');
  if (!f) return undefined;
  return {
    severity: DiagnosticSeverity.Warning,
    source: SOURCE,
    code: 'future-date',
    range: { start: { line: f.line, character: f.valueStart }, end: { line: f.line, character: f.valueStart + f.value.length } },
    message: `${f.key} ${f.value} is in the future: the store replaces a date later than the file's write time with that write time, so this date would not be kept.`,
  };
}

/** Each character textProblem objects to, as its own mark; a surrogate pair is one character. */
function badCharacters(text: string, line: number): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff;
    const unit = pair ? text.slice(i, i + 2) : text.charAt(i);
    if (textProblem('character', unit)) {
      const isSurrogate = c >= 0xd800 && c <= 0xdfff;
      out.push({
        severity: DiagnosticSeverity.Error,
        source: SOURCE,
        code: isSurrogate ? 'invalid-unicode' : 'control-character',
        range: { start: { line, character: i }, end: { line, character: i + unit.length } },
        message: isSurrogate
          ? 'An unpaired surrogate: this is not valid Unicode, and the store refuses text that holds one.'
          : `The control character U+${c.toString(16).toUpperCase().padStart(4, '0')}: the store refuses text holding control characters other than tab, newline and carriage return.`,
      });
    }
    if (pair) i++;
  }
  return out;
}

export function idRefs(lines: readonly string[]): IdRef[] {
  return lines.flatMap((text, line) => idsInLine(text, line));
}

/** A mark on every reference to an id the store does not hold, and a lighter one on a retired id. */
export function unknownIdProblems(refs: readonly IdRef[], targets: ReadonlyMap<string, IdTarget>, storeHome?: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const ref of refs) {
    const t = targets.get(ref.id);
    if (!t) continue;
    const range = { start: { line: ref.line, character: ref.start }, end: { line: ref.line, character: ref.end } };
    if (t.exists && t.retired) {
      out.push({
        severity: DiagnosticSeverity.Information,
        source: SOURCE,
        code: 'retired-id',
        range,
        message: `${ref.id} is retired: it is out of recall but kept (restore_memory with this id brings it back).`,
      });
    }
    if (t.exists) continue;
    out.push({
      severity: DiagnosticSeverity.Warning,
      source: SOURCE,
      code: 'unknown-id',
      range,
      message: `${ref.id} does not exist in the memory store${storeHome ? ` at ${storeHome}` : ''}${t.detail ? ` (${t.detail})` : ''}: a tool given this id would refuse it.`,
    });
  }
  return out;
}
