import type { SqlValue } from '../store/sqlite';
import { iso } from '../text/time';

/** A fact as retrieve_memory returns it: the value, when it was true, when it was recorded, what replaced it. */
export interface FactValue {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  scope: string;
  source: string;
  /** When the value became true, and (for a superseded value) when it stopped being true. */
  valid_from: string;
  valid_to: string | null;
  recorded_at: string;
  status: 'current' | 'historical';
  superseded_at: string | null;
  superseded_by: string | null;
}

/** The columns `factValue` reads; valid time falls back to record time for values saved before it was kept. */
export const FACT_COLUMNS = `id, subject, predicate, object, scope, source, subject_key, predicate_key, recorded_at, superseded_at, superseded_by,
  coalesce(valid_from, recorded_at) AS valid_from, coalesce(valid_to, superseded_at) AS valid_to`;

/**
 * One ledger row (selected with FACT_COLUMNS) as a fact value — the one mapping every reader of
 * facts uses. "Current" is judged at `asOf` when given: a value superseded later was current then.
 */
export function factValue(r: Record<string, SqlValue>, asOf?: number): FactValue {
  const supersededAt = r.superseded_at === null ? null : Number(r.superseded_at);
  const validTo = r.valid_to === null ? null : Number(r.valid_to);
  const current = supersededAt === null || (asOf !== undefined && (validTo ?? supersededAt) > asOf);
  return {
    id: `fact:${String(r.id)}`,
    subject: String(r.subject),
    predicate: String(r.predicate),
    object: String(r.object),
    scope: String(r.scope),
    source: String(r.source),
    valid_from: iso(Number(r.valid_from)),
    valid_to: current || validTo === null ? null : iso(validTo),
    recorded_at: iso(Number(r.recorded_at)),
    status: current ? 'current' : 'historical',
    superseded_at: current || supersededAt === null ? null : iso(supersededAt),
    superseded_by: current || r.superseded_by === null ? null : `fact:${String(r.superseded_by)}`,
  };
}

/** The grouping key of a fact's history (subject, predicate, scope). */
export function factKey(r: Record<string, SqlValue>): string {
  return `${String(r.subject_key)}\u0000${String(r.predicate_key)}\u0000${String(r.scope)}`;
}
