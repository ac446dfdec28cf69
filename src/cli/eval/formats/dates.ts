/**
 * Benchmark files write dates for people, without a zone. They are read as UTC: only the
 * order and the gaps matter to recall, and UTC keeps a run the same on every machine.
 */
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** LongMemEval: "2023/05/25 (Thu) 20:21". */
export function parseLongMemEvalDate(text: string): number | undefined {
  const m = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$/.exec(text.trim());
  if (!m) return undefined;
  return utc(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0));
}

/** LoCoMo: "1:56 pm on 8 May, 2023". */
export function parseLocomoDate(text: string): number | undefined {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text.trim());
  if (!m) return undefined;
  const month = MONTHS.findIndex((name) => name.startsWith((m[5] as string).toLowerCase()) && (m[5] as string).length >= 3);
  if (month < 0) return undefined;
  const hour12 = Number(m[1]) % 12;
  const hour = (m[3] as string).toLowerCase() === 'pm' ? hour12 + 12 : hour12;
  return utc(Number(m[6]), month + 1, Number(m[4]), hour, Number(m[2]));
}

function utc(year: number, month: number, day: number, hour: number, minute: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute);
  // Date.UTC rolls 31 February into March; a date that does not round-trip is not a date.
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}
