/** The calendar day of an instant in a person's own zone: an IANA name or a ±HH:MM offset. */
export function dayIn(at: number, timezone: string | undefined): string | undefined {
  if (!timezone) return new Date(at).toISOString().slice(0, 10);
  const offset = /^([+-])(\d{2}):?(\d{2})$/.exec(timezone);
  if (offset) {
    const minutes = (Number(offset[2]) * 60 + Number(offset[3])) * (offset[1] === '-' ? -1 : 1);
    return new Date(at + minutes * 60_000).toISOString().slice(0, 10);
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
 * A time window as people and models write it: "24h", "7d", "2w", "all", or
 * "<ISO>..<ISO>" (either side may be empty). Returns undefined when it cannot be read.
 */
export function parseTimeRange(text: string, now: number): { since?: number; before?: number } | undefined {
  const t = text.trim();
  if (t === 'all' || t === '') return {};
  const rel = /^(\d+)\s*(m|h|d|w)$/.exec(t);
  if (rel) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as 'm' | 'h' | 'd' | 'w'];
    return { since: now - Number(rel[1]) * unit };
  }
  const parts = t.split('..');
  if (parts.length !== 2) return undefined;
  const [from, to] = parts.map((p) => p.trim());
  const since = from ? parseInstant(from) : undefined;
  const before = to ? parseInstant(to) : undefined;
  if ((from && since === undefined) || (to && before === undefined)) return undefined;
  return { ...(since !== undefined ? { since } : {}), ...(before !== undefined ? { before } : {}) };
}
