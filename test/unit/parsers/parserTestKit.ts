import type { EventKind, ParsedEvent } from '../../../src/core/history/parsedSession';

/** Builds a JSONL text from records, for synthetic cases the fixtures do not show. */
export const jsonl = (...records: object[]): string => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

export type Counts = Partial<Record<EventKind | 'errors', number>>;

/** Events per kind, plus how many are failed tool results: what the per-fixture tables assert. */
export function countKinds(events: readonly ParsedEvent[]): Counts {
  const c: Counts = {};
  for (const e of events) {
    c[e.kind] = (c[e.kind] ?? 0) + 1;
    if (e.isError) c.errors = (c.errors ?? 0) + 1;
  }
  return c;
}
