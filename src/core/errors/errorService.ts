import { createHash } from 'node:crypto';
import { DEFAULT_SCOPE } from '../memory/scope';
import { Redaction } from '../privacy/redaction';
import { refuse, type Refusal } from '../refusal';
import { searchFts, snippets } from '../search/ftsSearch';
import type { Store } from '../store/store';
import { queryRows, type SqlValue } from '../store/sqlite';
import { textProblem } from '../text/textRules';
import { iso } from '../text/time';
import { countTokens } from '../text/tokens';
import { ERRORS_FTS, type ErrorRecorded } from './errorSchema';
import { recordsDoor } from '../pool/door';
import { sharedScope } from '../pool/teamShare';

export type ErrorOutcome = 'resolved' | 'failed' | 'abandoned';

export interface WriteErrorInput {
  tool_name: string;
  keywords: string[];
  symptom: string;
  cause?: string | undefined;
  action: string;
  outcome: ErrorOutcome;
}

export interface ErrorHistoryInput {
  mode?: 'search' | 'read' | 'write' | undefined;
  query?: string | undefined;
  limit?: number | undefined;
  hash?: string | undefined;
}

export interface ErrorRecord {
  hash: string;
  tool_name: string;
  keywords: string[];
  symptom: string;
  cause: string | null;
  /** The fix that worked. */
  action: string;
  outcome: 'resolved';
  source: string;
  /** global (this machine's) or team:<name> (shared through the team pool). */
  scope: string;
  first_recorded_at: string;
  last_recorded_at: string;
  times_recorded: number;
}

export const SEARCH_DEFAULT = 4;
export const SEARCH_CAP = 16;
/** A sidebar's worth; more is a search away. */
export const RECENT_CAP = 200;
/** Accepts a bare hash or the whole `no data: {hash}` line a failed tool result carries. */
const HASH_ARG = /^\s*(?:no data:\s*)?([0-9a-f]{8})\s*$/i;

/** What tools see; the service below is the only implementation, tests may substitute their own. */
export interface ErrorMemory {
  write(input: WriteErrorInput, client: string): Promise<object>;
  history(input: ErrorHistoryInput): object;
  recent(limit: number): { records: ErrorRecord[]; total: number };
}

/** The 8-char id of a fix: same tool, symptom and action → same hash, whoever records it and when. */
export function errorHash(toolName: string, symptom: string, action: string): { hash: string; digest: string } {
  // NUL separators keep "ab"+"c" and "a"+"bc" apart; trimming keeps a trailing newline from forking a record.
  const digest = createHash('sha256').update([toolName.trim(), symptom.trim(), action.trim()].join('\u0000')).digest('hex');
  return { hash: digest.slice(0, 8), digest };
}

/**
 * Error memory: resolved tool failures kept across sessions, found by keyword through the one
 * scorer, read back by hash. Failed and abandoned attempts are accepted and dropped so a search
 * only ever returns fixes that worked.
 */
export class ErrorService implements ErrorMemory {
  constructor(
    private readonly store: Store,
    private readonly redaction: Redaction = new Redaction(),
  ) {}

  async write(given: WriteErrorInput, client: string) {
    if (given.outcome !== 'resolved') {
      return {
        ok: true as const,
        recorded: false,
        stored: false,
        outcome: given.outcome,
        note: `outcome=${given.outcome} is accepted but not stored: error memory keeps only fixes that worked. Record it again with outcome=resolved once a fix is confirmed.`,
      };
    }
    // A fix is global memory unless error fixes are marked for a team (teamShare.ts). The hash is of the redacted text, as it is what is kept.
    const shared = sharedScope(this.store.home, 'errors');
    const input = { ...given, ...(await this.redaction.value({ symptom: given.symptom, action: given.action, cause: given.cause, keywords: given.keywords }, shared ?? DEFAULT_SCOPE)) };
    const fields: [string, string | undefined][] = [['tool_name', input.tool_name], ['symptom', input.symptom], ['action', input.action], ['cause', input.cause]];
    input.keywords.forEach((k, i) => fields.push([`keywords.${i}`, k]));
    for (const [field, value] of fields) {
      if (value === undefined) continue;
      const problem = textProblem(field, value);
      if (problem) return refuse(`${problem}. Nothing was recorded.`);
      if (!value.trim()) return refuse(`${field} is blank. Nothing was recorded.`);
    }
    const { hash, digest } = errorHash(input.tool_name, input.symptom, input.action);
    const cause = input.cause?.trim() ? input.cause.trim() : null;
    return this.store.commit((db) => {
      const existing = queryRows(db, 'SELECT digest, times_recorded, scope FROM errors WHERE hash = ?', [hash])[0];
      if (existing && existing.digest !== digest) {
        return { result: refuse(`hash ${hash} already belongs to a different record (a sha256 prefix collision). Reword the symptom slightly and record again. Nothing was recorded.`) };
      }
      const at = this.store.now;
      const op: ErrorRecorded = {
        op: 'errors.recorded', at, hash, digest,
        toolName: input.tool_name.trim(), keywords: input.keywords.map((k) => k.trim()),
        symptom: input.symptom.trim(), cause, action: input.action.trim(), source: client,
        ...(shared ? { scope: shared } : {}),
      };
      const times = existing ? Number(existing.times_recorded) + 1 : 1;
      return {
        op,
        result: {
          ok: true as const,
          recorded: true,
          hash,
          new: !existing,
          times_recorded: times,
          recorded_at: iso(at),
          // The record's scope after this write: a fix once the team's stays the team's.
          scope: shared ?? (existing ? String(existing.scope) : DEFAULT_SCOPE),
          ...(existing ? { note: `this fix was already recorded as ${hash}; the record was confirmed again and merged any new keywords and cause` } : {}),
        },
      };
    });
  }

  /** error_history: mode inferred from the arguments when omitted (hash → read, otherwise search). */
  history(input: ErrorHistoryInput) {
    const mode = input.mode ?? (input.hash !== undefined ? 'read' : 'search');
    if (mode === 'write') return refuse(WRITE_REMOVED);
    if (mode === 'read') {
      if (input.hash === undefined) return refuse('mode=read needs `hash`: the 8-character id a search result or a `no data: {hash}` line gave you.');
      return this.read(input.hash);
    }
    if (input.query === undefined) {
      return refuse(input.hash !== undefined ? 'mode=search needs `query`; to fetch one record by `hash`, use mode=read or leave mode out.' : 'error_history needs `query` (keywords to search past failures) or `hash` (one record by its 8-character id).');
    }
    return this.search(input.query, input.limit);
  }

  search(query: string, limit?: number) {
    const asked = limit ?? SEARCH_DEFAULT;
    const capped = Math.min(asked, SEARCH_CAP);
    const db = this.store.db;
    const found = searchFts(db, ERRORS_FTS, { query, limit: capped, sort: 'relevance', now: this.store.now });
    if (!found.ok) return refuse(found.reason);
    const docids = found.hits.map((h) => h.docid);
    const excerpts = snippets(db, ERRORS_FTS, found.match, docids);
    const byDoc = new Map(
      queryRows(db, `SELECT * FROM errors WHERE fts_docid IN (${docids.map(() => '?').join(',') || 'NULL'})`, docids).map((r) => [Number(r.fts_docid), r]),
    );
    const records = found.hits.flatMap((h) => {
      const row = byDoc.get(h.docid);
      return row ? [{ ...toRecord(row), snippet: excerpts.get(h.docid) ?? '', score: Math.round(h.bm25 * 1000) / 1000 }] : [];
    });
    const notes: string[] = [];
    if (asked > SEARCH_CAP) notes.push(`limit ${asked} was capped at ${SEARCH_CAP}`);
    if (!records.length) notes.push('no recorded fix matches every keyword; try fewer or different words, such as the tool name alone');
    return {
      ok: true as const,
      mode: 'search' as const,
      door: recordsDoor(db, records.map((r) => r.scope)),
      query,
      limit: capped,
      records,
      total: found.total,
      shown: records.length,
      tokens: countTokens(JSON.stringify(records)),
      ...(notes.length ? { note: notes.join('; ') } : {}),
    };
  }

  /** The most recently confirmed fixes, newest first: what a person browsing error memory sees first. */
  recent(limit: number): { records: ErrorRecord[]; total: number } {
    const n = Math.max(1, Math.min(RECENT_CAP, Math.floor(limit)));
    const db = this.store.db;
    const rows = queryRows(db, 'SELECT * FROM errors ORDER BY last_recorded_at DESC, hash LIMIT ?', [n]);
    return { records: rows.map(toRecord), total: Number(queryRows(db, 'SELECT count(*) AS n FROM errors')[0]?.n ?? 0) };
  }

  read(hashArg: string): { ok: true; mode: 'read'; door: string; record: ErrorRecord } | Refusal {
    const m = HASH_ARG.exec(hashArg);
    if (!m) return refuse(`hash "${hashArg.slice(0, 40)}" is not an 8-character hex id such as 3fa91c07`);
    const hash = (m[1] as string).toLowerCase();
    const row = queryRows(this.store.db, 'SELECT * FROM errors WHERE hash = ?', [hash])[0];
    if (!row) return refuse(`no error record has hash ${hash}; search by keyword with error_history(query=…) instead`);
    return { ok: true as const, mode: 'read' as const, door: recordsDoor(this.store.db, [String(row.scope)]), record: toRecord(row) };
  }
}

export const WRITE_REMOVED =
  'error_history mode=write was removed (spec v1.3.11); record a resolved failure with the write_error tool (tool_name, keywords, symptom, action, outcome, optional cause). Nothing was recorded.';

function toRecord(r: Record<string, SqlValue>): ErrorRecord {
  return {
    hash: String(r.hash),
    tool_name: String(r.tool_name),
    keywords: JSON.parse(String(r.keywords)) as string[],
    symptom: String(r.symptom),
    cause: r.cause === null ? null : String(r.cause),
    action: String(r.action),
    outcome: 'resolved',
    source: String(r.source),
    scope: String(r.scope),
    first_recorded_at: iso(Number(r.first_recorded_at)),
    last_recorded_at: iso(Number(r.last_recorded_at)),
    times_recorded: Number(r.times_recorded),
  };
}
