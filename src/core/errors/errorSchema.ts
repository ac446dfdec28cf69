import { createFtsTableSql, indexTerms } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import { queryRows, queryScalar, type Database } from '../store/sqlite';

export const ERRORS_FTS = 'errors_fts';

/**
 * A tool failure and the fix that resolved it. Only resolved outcomes are journaled, so the
 * store never fills with dead ends; the same fix recorded again lands on the same record.
 */
export interface ErrorRecorded extends Operation {
  op: 'errors.recorded';
  hash: string;
  /** Full sha256 behind the 8-char hash, so a prefix collision is caught instead of merging two fixes. */
  digest: string;
  toolName: string;
  keywords: string[];
  symptom: string;
  cause: string | null;
  action: string;
  source: string;
  /** `team:<name>` when error fixes are shared with that team (teamShare.ts); absent: this machine's (global). */
  scope?: string;
}

const MIGRATIONS = [
  `
  CREATE TABLE errors (
    hash TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    keywords TEXT NOT NULL,
    symptom TEXT NOT NULL,
    cause TEXT,
    action TEXT NOT NULL,
    source TEXT NOT NULL,
    first_recorded_at INTEGER NOT NULL,
    last_recorded_at INTEGER NOT NULL,
    times_recorded INTEGER NOT NULL,
    fts_docid INTEGER
  );
  ${createFtsTableSql(ERRORS_FTS, ['hash'])}
  `,
  // A fix recorded for a team travels through the pool; every other fix is global, as before.
  `ALTER TABLE errors ADD COLUMN scope TEXT NOT NULL DEFAULT 'global';`,
];

/** What the keyword index sees: every field an agent might remember a failure by. */
export function errorBody(r: { toolName: string; keywords: readonly string[]; symptom: string; cause: string | null; action: string }): string {
  return [r.toolName, r.keywords.join(' '), r.symptom, r.cause ?? '', r.action].join('\n');
}

/** Keywords from every recording, first-seen order, compared without case. */
export function mergeKeywords(a: readonly string[], b: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const k of [...a, ...b]) {
    const key = k.trim().toLowerCase();
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(k.trim());
  }
  return out;
}

function applyErrorRecorded(db: Database, op: Operation): void {
  const e = op as ErrorRecorded;
  const existing = queryRows(db, 'SELECT keywords, cause, scope, fts_docid FROM errors WHERE hash = ? AND digest = ?', [e.hash, e.digest])[0];
  if (existing) {
    // A fix once recorded for a team stays the team's; a confirmation here does not take it back.
    const scope = e.scope ?? String(existing.scope);
    // Recording a known fix again confirms it: the record stays one row, learns any new keywords
    // and a newer explanation of the cause, and counts the confirmation.
    const keywords = mergeKeywords(JSON.parse(String(existing.keywords)) as string[], e.keywords);
    const cause = e.cause ?? (existing.cause === null ? null : String(existing.cause));
    const body = errorBody({ ...e, keywords, cause });
    db.run(`UPDATE ${ERRORS_FTS} SET terms = ?, body = ?, created_at = ?, scope = ? WHERE docid = ?`, [indexTerms(body), body, e.at, scope, existing.fts_docid as number]);
    db.run('UPDATE errors SET keywords = ?, cause = ?, scope = ?, first_recorded_at = min(first_recorded_at, ?), last_recorded_at = max(last_recorded_at, ?), times_recorded = times_recorded + 1 WHERE hash = ?', [
      JSON.stringify(keywords),
      cause,
      scope,
      e.at,
      e.at,
      e.hash,
    ]);
    return;
  }
  const body = errorBody(e);
  const scope = e.scope ?? 'global';
  db.run(`INSERT INTO ${ERRORS_FTS}(terms, body, created_at, scope, hash) VALUES (?, ?, ?, ?, ?)`, [indexTerms(body), body, e.at, scope, e.hash]);
  const docid = Number(queryScalar(db, 'SELECT last_insert_rowid()'));
  // A different digest under the same hash would violate the primary key and the store skips the
  // line with a warning; the writer refuses that case before journaling, so it only arises from a foreign journal.
  db.run(
    `INSERT INTO errors(hash, digest, tool_name, keywords, symptom, cause, action, source, first_recorded_at, last_recorded_at, times_recorded, fts_docid, scope)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
    [e.hash, e.digest, e.toolName, JSON.stringify(mergeKeywords(e.keywords, [])), e.symptom, e.cause, e.action, e.source, e.at, e.at, docid, scope],
  );
}

export const errorModule: StoreModule = {
  name: 'errors',
  migrations: MIGRATIONS,
  appliers: {
    'errors.recorded': applyErrorRecorded,
  },
};
