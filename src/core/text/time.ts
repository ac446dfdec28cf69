/** The offsets places use run from UTC-12:00 (Baker Island) to UTC+14:00 (Line Islands). */
const OFFSET_MIN_MINUTES = -12 * 60;
const OFFSET_MAX_MINUTES = 14 * 60;

/** A ±HH:MM (or ±HHMM) offset in minutes; undefined when it is not one, or not one any place uses. */
function utcOffsetMinutes(timezone: string): number | undefined {
  const offset = /^([+-])(\d{2}):?(\d{2})$/.exec(timezone);
  if (!offset || Number(offset[3]) >= 60) return undefined;
  const minutes = (Number(offset[2]) * 60 + Number(offset[3])) * (offset[1] === '-' ? -1 : 1);
  return minutes < OFFSET_MIN_MINUTES || minutes > OFFSET_MAX_MINUTES ? undefined : minutes;
}

/** The calendar day of an instant in a person's own zone: an IANA name or a ±HH:MM offset from -12:00 to +14:00. */
export function dayIn(at: number, timezone: string | undefined): string | undefined {
  if (!timezone) return new Date(at).toISOString().slice(0, 10);
  if (/^[+-]\d{2}:?\d{2}$/.test(timezone)) {
    const minutes = utcOffsetMinutes(timezone);
    return minutes === undefined ? undefined : new Date(at + minutes * 60_000).toISOString().slice(0, 10);
  }
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  } catch {
    return undefined;
  }
}

/** Parses an ISO instant, refusing what Date would silently turn into NaN or guess at. */
export function parseInstant(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Every way a time window may be written, as the refusal lists them. `m` is a month, as
 * Agenvoy writes it (1d/7d/1m/1y), so minutes are written `min`.
 */
export const TIME_RANGE_FORMS = '"<N>min", "<N>h", "<N>d", "<N>w", "<N>m" (months), "<N>y" (e.g. "24h", "7d", "2w", "1m", "1y"), "all", or "<ISO>..<ISO>" (either side may be empty)';

const FIXED_UNITS_MS = { min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * A time window as people and models write it (TIME_RANGE_FORMS). Months and years count back
 * on the calendar (UTC), so "1m" from 31 March is 3 March rather than a fixed 30 days.
 * Returns undefined when it cannot be read.
 */
export function parseTimeRange(text: string, now: number): { since?: number; before?: number } | undefined {
  const t = text.trim();
  if (t === 'all' || t === '') return {};
  const rel = /^(\d+)\s*(min|h|d|w|m|y)$/.exec(t);
  if (rel) {
    const n = Number(rel[1]);
    const unit = rel[2] as keyof typeof FIXED_UNITS_MS | 'm' | 'y';
    if (unit === 'm' || unit === 'y') {
      const d = new Date(now);
      if (unit === 'm') d.setUTCMonth(d.getUTCMonth() - n);
      else d.setUTCFullYear(d.getUTCFullYear() - n);
      return { since: d.getTime() };
    }
    return { since: now - n * FIXED_UNITS_MS[unit] };
  }
  const parts = t.split('..');
  if (parts.length !== 2) return undefined;
  const [from, to] = parts.map((p) => p.trim());
  const since = from ? parseInstant(from) : undefined;
  const before = to ? parseInstant(to) : undefined;
  if ((from && since === undefined) || (to && before === undefined)) return undefined;
  return { ...(since !== undefined ? { since } : {}), ...(before !== undefined ? { before } : {}) };
}
