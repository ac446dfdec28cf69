import { queryRows, queryScalar, type Database, type SqlValue } from '../../store/sqlite';
import { EMBEDDABLE_EVENTS } from '../../history/historySchema';
import { textHash, type Corpus } from './semanticSchema';

/** A text that has no vector of the model yet, with the hash its vector will carry. */
export interface Todo {
  key: string;
  text: string;
  hash: string;
}

/**
 * What each corpus embeds. Memory: live day-log entries, note chunks and fact values
 * (promoted history notes are searched by words only: search_history is lexical by contract).
 * History: what people and agents said in imported sessions (user and assistant messages),
 * newest first, since recent talk is what a search by meaning is asked about most.
 */
const MEMORY_ITEMS = `
  SELECT n.id AS key, n.text AS text FROM notes n WHERE n.retired_at IS NULL
  UNION ALL
  SELECT 'chunk:' || c.file_id || ':' || c.seq, c.text FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
    WHERE f.retired_at IS NULL AND f.kind = 'note'
  UNION ALL
  SELECT 'fact:' || x.id, x.subject || ' ' || x.predicate || ' ' || x.object FROM facts x WHERE x.retired_at IS NULL`;

const MEMORY_MISSING = `SELECT key, text FROM (${MEMORY_ITEMS}) i WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = i.key AND e.model = ?)`;

const HISTORY_MISSING = `
  SELECT 'event:' || ev.id AS key, ev.text AS text, ev.hash AS hash FROM events ev
    WHERE ${EMBEDDABLE_EVENTS}
      AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = 'event:' || ev.id AND e.model = ? AND e.text_hash = ev.hash)`;

export function missing(db: Database, corpus: Corpus, model: string, limit: number): Todo[] {
  if (limit <= 0) return [];
  if (corpus === 'memory') {
    return queryRows(db, `${MEMORY_MISSING} LIMIT ?`, [model, limit]).map((r) => ({ key: String(r.key), text: String(r.text), hash: textHash(String(r.text)) }));
  }
  return queryRows(db, `${HISTORY_MISSING} ORDER BY ev.id DESC LIMIT ?`, [model, limit]).map((r) => ({ key: String(r.key), text: String(r.text), hash: String(r.hash) }));
}

export function missingCount(db: Database, corpus: Corpus, model: string): number {
  return Number(queryScalar(db, `SELECT count(*) FROM (${corpus === 'memory' ? MEMORY_MISSING : HISTORY_MISSING})`, [model]) ?? 0);
}

/**
 * How many items a corpus has and how many of them lack a vector of `model`, in one pass over
 * them (for the history, over the index of the events it embeds, historySchema.ts).
 */
export function corpusCounts(db: Database, corpus: Corpus, model: string): { total: number; missing: number } {
  const sql =
    corpus === 'memory'
      ? `SELECT count(*) AS total, coalesce(sum(NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = i.key AND e.model = ?)), 0) AS missing FROM (${MEMORY_ITEMS}) i`
      : `SELECT count(*) AS total, coalesce(sum(NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = 'event:' || ev.id AND e.model = ? AND e.text_hash = ev.hash)), 0) AS missing
           FROM events ev WHERE ${EMBEDDABLE_EVENTS}`;
  const row = queryRows(db, sql, [model])[0];
  return { total: Number(row?.total ?? 0), missing: Number(row?.missing ?? 0) };
}

/** What a ranked key stands for now, for filtering: absent when it is gone (retired, deleted, changed since). */
export interface Resolved {
  key: string;
  /** The item's docid in its keyword index (memory_fts or history_fts); null for a superseded fact, which that index no longer holds. */
  docid: number | null;
  scope: string;
  /** Epoch ms. */
  at: number | null;
  historical: boolean;
}

const list = (n: number) => Array.from({ length: n }, () => '?').join(',');

/** Keys per look-up: SQLite takes at most 32,766 bound values in one statement. */
const RESOLVE_CHUNK = 500;

export function resolveKeys(db: Database, corpus: Corpus, model: string, keys: readonly string[]): Map<string, Resolved> {
  const out = new Map<string, Resolved>();
  for (let i = 0; i < keys.length; i += RESOLVE_CHUNK) resolveChunk(db, corpus, model, keys.slice(i, i + RESOLVE_CHUNK), out);
  return out;
}

function resolveChunk(db: Database, corpus: Corpus, model: string, keys: readonly string[], out: Map<string, Resolved>): void {
  const num = (v: SqlValue | undefined) => (v === null || v === undefined ? null : Number(v));
  if (corpus === 'history') {
    const ids = keys.map((k) => Number(k.slice(6)));
    if (!ids.length) return;
    // A vector is for the event's text only while its hash is the event's (an id may be reused, a message re-imported).
    const rows = queryRows(
      db,
      `SELECT ev.id, ev.created_at, s.source FROM events ev JOIN sessions s ON s.id = ev.session_id
        WHERE ev.id IN (${list(ids.length)})
          AND EXISTS (SELECT 1 FROM embeddings e WHERE e.key = 'event:' || ev.id AND e.model = ? AND e.text_hash = ev.hash)`,
      [...ids, model],
    );
    for (const r of rows) out.set(`event:${Number(r.id)}`, { key: `event:${Number(r.id)}`, docid: Number(r.id), scope: String(r.source), at: num(r.created_at), historical: false });
    return;
  }
  const entries = keys.filter((k) => k.startsWith('entry:'));
  const facts = keys.filter((k) => k.startsWith('fact:')).map((k) => k.slice(5));
  const chunks = keys.filter((k) => k.startsWith('chunk:'));
  if (entries.length) {
    for (const r of queryRows(db, `SELECT id, scope, created_at, fts_docid FROM notes WHERE retired_at IS NULL AND id IN (${list(entries.length)})`, entries)) {
      out.set(String(r.id), { key: String(r.id), docid: num(r.fts_docid), scope: String(r.scope), at: num(r.created_at), historical: false });
    }
  }
  if (facts.length) {
    for (const r of queryRows(db, `SELECT id, scope, recorded_at, fts_docid, superseded_at FROM facts WHERE retired_at IS NULL AND id IN (${list(facts.length)})`, facts)) {
      out.set(`fact:${String(r.id)}`, { key: `fact:${String(r.id)}`, docid: num(r.fts_docid), scope: String(r.scope), at: num(r.recorded_at), historical: r.superseded_at !== null });
    }
  }
  if (chunks.length) {
    const wanted = new Set(chunks);
    const fileIds = [...new Set(chunks.map((k) => /^chunk:(.+):\d+$/.exec(k)?.[1]).filter((x): x is string => x !== undefined))];
    if (fileIds.length) {
      const rows = queryRows(
        db,
        `SELECT c.file_id, c.seq, c.fts_docid, f.scope, coalesce(f.note_date, f.indexed_at) AS at FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
          WHERE f.retired_at IS NULL AND f.kind = 'note' AND c.file_id IN (${list(fileIds.length)})`,
        fileIds,
      );
      for (const r of rows) {
        const key = `chunk:${String(r.file_id)}:${Number(r.seq)}`;
        if (wanted.has(key)) out.set(key, { key, docid: num(r.fts_docid), scope: String(r.scope), at: num(r.at), historical: false });
      }
    }
  }
}

/** The memory keys among `keys` that are superseded facts now. */
export function supersededFacts(db: Database, keys: readonly string[]): Set<string> {
  const ids = keys.filter((k) => k.startsWith('fact:')).map((k) => k.slice(5));
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += RESOLVE_CHUNK) {
    const part = ids.slice(i, i + RESOLVE_CHUNK);
    for (const r of queryRows(db, `SELECT id FROM facts WHERE superseded_at IS NOT NULL AND id IN (${list(part.length)})`, part)) out.add(`fact:${String(r.id)}`);
  }
  return out;
}

/** The facts whose superseded state changed after row `after` of `facts_superseded_log`, as memory keys, and the last row. */
export function supersededSince(db: Database, after: number): { keys: string[]; last: number } {
  const rows = queryRows(db, 'SELECT seq, fact_id FROM facts_superseded_log WHERE seq > ? ORDER BY seq', [after]);
  return { keys: [...new Set(rows.map((r) => `fact:${String(r.fact_id)}`))], last: rows.length ? Number(rows[rows.length - 1]?.seq) : after };
}
