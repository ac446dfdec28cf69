import { queryRows, type Database, type SqlValue } from '../store/sqlite';

/** One thing recorded in the store that whats_new reports. */
export interface FeedItem {
  kind: 'fact' | 'note' | 'answer';
  id: string;
  at: number;
  author: string;
  scope: string;
  text: string;
  /** For an answer: the request it answers. */
  requestId: string | null;
}

export interface FeedQuery {
  readerKey: string;
  /** The window, both ends inclusive (epoch ms): an item at exactly a mark is shown twice rather than lost. */
  since: number;
  until: number;
  scope?: string | undefined;
  includeOwn: boolean;
  /** Keyset position: only items strictly older than this (at, id) pair. */
  after?: { at: number; id: string } | undefined;
  limit: number;
}

/**
 * What was saved in the store, newest first, read straight from the memory tables rather than
 * copied: facts (a fact's own sentence is the note behind it, so that note is not listed
 * twice), notes saved on their own, and answers to this reader's own requests. Authors are the
 * writes' `source`; "own" is a write whose source is this connection's name. Retired memories
 * are out of recall, so they are out of this feed too.
 */
export function readFeed(db: Database, q: FeedQuery): FeedItem[] {
  const arms: { sql: string; params: SqlValue[] }[] = [
    {
      sql: `SELECT 'fact' AS kind, 'fact:' || id AS ref, recorded_at AS at, source AS author, scope, subject || ' · ' || predicate || ' → ' || object AS text, NULL AS request_id FROM facts WHERE retired_at IS NULL AND ${common('recorded_at', "'fact:' || id", 'source', q)}`,
      params: commonParams(q),
    },
    {
      sql: `SELECT 'note', id, created_at, source, scope, text, NULL FROM notes WHERE fact_id IS NULL AND retired_at IS NULL AND ${common('created_at', 'id', 'source', q)}`,
      params: commonParams(q),
    },
    {
      // Answers are addressed to the reader by construction, so they are never the reader's own.
      sql: `SELECT 'answer', 'answer:' || id, answered_at, addressee, scope, answer, id FROM agent_requests WHERE asker_key = ? AND answered_at IS NOT NULL AND ${common('answered_at', "'answer:' || id", null, q)}`,
      params: [q.readerKey, ...commonParams({ ...q, includeOwn: true })],
    },
  ];
  const sql = `${arms.map((a) => a.sql).join(' UNION ALL ')} ORDER BY at DESC, ref DESC LIMIT ?`;
  return queryRows(db, sql, [...arms.flatMap((a) => a.params), q.limit]).map((r) => ({
    kind: String(r.kind) as FeedItem['kind'],
    id: String(r.ref),
    at: Number(r.at),
    author: String(r.author),
    scope: String(r.scope),
    text: String(r.text),
    requestId: r.request_id === null ? null : String(r.request_id),
  }));
}

// Each arm carries its own filters so SQLite can apply them before the union is sorted.
function common(atColumn: string, refExpr: string, sourceColumn: string | null, q: FeedQuery): string {
  const parts = [`${atColumn} >= ?`, `${atColumn} <= ?`];
  if (q.scope !== undefined) parts.push('scope = ?');
  // lower(trim()) is the SQL twin of connectionKey().
  if (!q.includeOwn && sourceColumn) parts.push(`lower(trim(${sourceColumn})) != ?`);
  if (q.after) parts.push(`(${atColumn} < ? OR (${atColumn} = ? AND ${refExpr} < ?))`);
  return parts.join(' AND ');
}

function commonParams(q: FeedQuery): SqlValue[] {
  const params: SqlValue[] = [q.since, q.until];
  if (q.scope !== undefined) params.push(q.scope);
  if (!q.includeOwn) params.push(q.readerKey);
  if (q.after) params.push(q.after.at, q.after.at, q.after.id);
  return params;
}
