/**
 * Tiny narrowing helpers for parsers: transcripts are read as `unknown` and every field is
 * checked where it is used, so a record of an unexpected shape degrades to "absent" instead
 * of throwing halfway through a session.
 */

import type { ParseProblem } from '../parsedSession';

export type JsonRecord = Record<string, unknown>;

export function isRecord(v: unknown): v is JsonRecord {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asRecord(v: unknown): JsonRecord | undefined {
  return isRecord(v) ? v : undefined;
}

export function asArray(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A string with something in it; blank strings count as absent for titles, ids and names. */
export function asNonEmptyString(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

export function asNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function asBoolean(v: unknown): boolean | undefined {
  return typeof v === 'boolean' ? v : undefined;
}

/** Epoch milliseconds from either an epoch number or a date string; sources use both. */
export function asEpochMs(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/** Compact JSON for keeping an unrecognised record whole; never throws, never returns undefined. */
export function compactJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** JSON.parse with the failure as a value, so a bad line becomes a ParseProblem rather than a throw. */
export function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

export function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * Calls `onRecord` for every JSON-object line of a JSONL text with its 1-based line number. A
 * blank line is skipped; a line that is not JSON, or not an object, becomes a problem naming
 * the file and line, and reading goes on. A leading BOM and CRLF endings are tolerated.
 */
export function forEachJsonLine(file: string, text: string, problems: ParseProblem[], onRecord: (rec: JsonRecord, line: number) => void): void {
  text.split('\n').forEach((raw, i) => {
    const line = (i === 0 ? raw.replace(/^\uFEFF/, '') : raw).replace(/\r$/, '');
    if (!line.trim()) return;
    const parsed = tryParseJson(line);
    if (!parsed.ok) return void problems.push({ file, line: i + 1, reason: `not JSON: ${parsed.error}` });
    const rec = asRecord(parsed.value);
    if (!rec) return void problems.push({ file, line: i + 1, reason: 'not a JSON object' });
    onRecord(rec, i + 1);
  });
}
