import type { SqlValue } from '../store/sqlite';

/**
 * The statements that list lcm_grep's regex candidates. Messages come in two parts:
 *
 * - inline events (their whole text in the row), narrowed by the prefilter and read with
 *   their text;
 * - large events (text in the blob store; the index and the row hold only its head), always
 *   candidates, read from the covering index `lcm_large_events` alone. Their rows hold ~4 KB of
 *   inline head before the blob column, and reading that column through each row's overflow
 *   pages cost ~150 ms per 20,000 large events on every call; the index answers in a few.
 */

export interface Statement {
  sql: string;
  params: SqlValue[];
}

/** A narrowing of the inline rows (or summaries) that hold a pattern's literals. */
export interface Narrowing {
  sql: string;
  params: SqlValue[];
}

export interface CandidateStatements {
  /** Every candidate's id, time and (large events) blob hash, newest first: a recency scan reads texts a batch at a time. */
  newestFirst: Statement;
  /** A full pass: the statements listing rows with their text (id, at, text), and the one listing large events (id, at, blob). */
  allInOnePass: { texts: Statement[]; large?: Statement | undefined };
}

/**
 * `scope` holds the caller's conditions on the conversation and the time (over `e.`/`s.` for
 * messages, `x.`/`s.` for summaries, with `at` the row's time expression).
 */
export function messageCandidates(at: string, scope: Statement, narrowing: Narrowing | undefined): CandidateStatements {
  const inlineWhere = `${scope.sql} AND e.blob IS NULL${narrowing ? ` AND ${narrowing.sql}` : ''}`;
  const inlineParams = [...scope.params, ...(narrowing?.params ?? [])];
  const inlineFrom = 'events e JOIN sessions s ON s.id = e.session_id';
  // CROSS JOIN keeps events outermost, so the partial index is walked once, not entered per session.
  const largeFrom = 'events e INDEXED BY lcm_large_events CROSS JOIN sessions s ON s.id = e.session_id';
  const largeWhere = `${scope.sql} AND e.blob IS NOT NULL`;
  return {
    newestFirst: {
      sql: `SELECT id, at, blob FROM (SELECT e.id AS id, ${at} AS at, NULL AS blob FROM ${inlineFrom} WHERE ${inlineWhere} UNION ALL SELECT e.id AS id, ${at} AS at, e.blob AS blob FROM ${largeFrom} WHERE ${largeWhere}) ORDER BY at DESC, id DESC`,
      params: [...inlineParams, ...scope.params],
    },
    allInOnePass: {
      texts: [{ sql: `SELECT e.id AS id, ${at} AS at, e.text AS text FROM ${inlineFrom} WHERE ${inlineWhere}`, params: inlineParams }],
      large: { sql: `SELECT e.id AS id, ${at} AS at, e.blob AS blob FROM ${largeFrom} WHERE ${largeWhere}`, params: scope.params },
    },
  };
}

export function summaryCandidates(at: string, scope: Statement, narrowing: Narrowing | undefined): CandidateStatements {
  const where = `${scope.sql}${narrowing ? ` AND ${narrowing.sql}` : ''}`;
  const params = [...scope.params, ...(narrowing?.params ?? [])];
  const from = 'lcm_summaries x JOIN sessions s ON s.id = x.session_id';
  return {
    newestFirst: { sql: `SELECT x.n AS id, ${at} AS at FROM ${from} WHERE ${where} ORDER BY at DESC, id DESC`, params },
    allInOnePass: { texts: [{ sql: `SELECT x.n AS id, ${at} AS at, x.content AS text FROM ${from} WHERE ${where}`, params }] },
  };
}
