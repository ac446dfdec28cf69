import { refuse, type Refusal } from '../../refusal';
import { searchFts, type SearchOutcome } from '../../search/ftsSearch';
import { Conditions, queryRows, queryScalar, type Database, type SqlValue } from '../../store/sqlite';
import { iso } from '../../text/time';
import { MEMORY_FTS } from '../memorySchema';
import { scopeProblem } from '../scope';
import { inlineTags } from '../vault/frontMatter';
import { chunkRefs } from './chunkRefs';
import { contentWords } from './queryWords';
import { parseList } from './jsonList';

export interface MemoryMapInput {
  query?: string | undefined;
  scope?: string | undefined;
  limit?: number | undefined;
}

const HISTORY_PER_FACT = 20;
const EXCERPT = 120;

/**
 * memory_map: an overview for browsing — memories (their ids), the things facts are about,
 * topics (tags and folders), facts with their whole history, and what was retired. With a query
 * each list keeps only what holds the query's words, which is how a memory's id is found
 * without loading the whole map. Not for answering questions: get_context is.
 */
export function memoryMap(db: Database, now: number, input: MemoryMapInput): object | Refusal {
  if (input.scope !== undefined && input.query === undefined) return refuse('scope narrows a query: send query with it (memory_map without a query maps every scope)');
  if (input.scope !== undefined) {
    const bad = scopeProblem(input.scope);
    if (bad) return refuse(bad);
  }
  const limit = input.limit ?? (input.query === undefined ? 20 : 10);
  const q = input.query;
  let found: SearchOutcome | undefined;
  if (q !== undefined) {
    found = searchFts(db, MEMORY_FTS, { query: q, limit: 500, sort: 'relevance', scope: input.scope, now });
    if (found.ok && !found.hits.length && contentWords(q).length) {
      found = searchFts(db, MEMORY_FTS, { query: contentWords(q).join(' '), limit: 500, sort: 'relevance', scope: input.scope, now, anyPhrase: true });
    }
    if (!found.ok) return refuse(found.reason);
  }
  const refs = found?.ok ? refsOf(db, found.hits.map((h) => h.docid)) : undefined;
  return {
    ok: true,
    ...(q !== undefined ? { query: q } : {}),
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    limit,
    memories: memories(db, limit, refs),
    entities: entities(db, limit, q, input.scope),
    topics: topics(db, limit, q, input.scope),
    facts: facts(db, limit, refs, input.scope),
    retired: retired(db, limit, q, input.scope),
  };
}

function refsOf(db: Database, docids: number[]): { ref: string; docid: number }[] {
  if (!docids.length) return [];
  const rows = new Map(queryRows(db, `SELECT docid, ref FROM ${MEMORY_FTS} WHERE docid IN (${docids.map(() => '?').join(',')})`, docids).map((r) => [Number(r.docid), String(r.ref)]));
  return docids.map((d) => ({ ref: rows.get(d) ?? '', docid: d }));
}

function memories(db: Database, limit: number, refs: { ref: string; docid: number }[] | undefined) {
  if (refs) {
    const chunks = chunkRefs(db, refs.map((r) => r.docid));
    const seen = new Set<string>();
    const ids = refs.filter((r) => !r.ref.startsWith('fact:') && !seen.has(r.ref) && seen.add(r.ref));
    const items = ids.slice(0, limit).map((r) => describe(db, r.ref, chunks.get(r.docid)?.seq));
    return { items: items.filter(Boolean), total: ids.length };
  }
  const rows = queryRows(
    db,
    `SELECT * FROM (
       SELECT id, 'entry' AS kind, scope, created_at AS at, substr(text, 1, ${EXCERPT}) AS label FROM notes WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT ?)
     UNION ALL SELECT * FROM (
       SELECT 'note:' || path, kind, scope, coalesce(note_date, indexed_at), coalesce(title, path) FROM vault_files WHERE retired_at IS NULL AND kind != 'daily' ORDER BY coalesce(note_date, indexed_at) DESC LIMIT ?)
     ORDER BY at DESC LIMIT ?`,
    [limit, limit, limit],
  );
  const total = Number(queryScalar(db, "SELECT (SELECT count(*) FROM notes WHERE retired_at IS NULL) + (SELECT count(*) FROM vault_files WHERE retired_at IS NULL AND kind != 'daily')") ?? 0);
  return { items: rows.map((r) => ({ id: String(r.id), kind: String(r.kind), scope: String(r.scope), at: iso(Number(r.at)), label: String(r.label) })), total };
}

function describe(db: Database, ref: string, chunk: number | undefined) {
  if (ref.startsWith('entry:')) {
    const r = queryRows(db, `SELECT scope, created_at, substr(text, 1, ${EXCERPT}) AS label FROM notes WHERE id = ?`, [ref])[0];
    return r && { id: ref, kind: 'entry', scope: String(r.scope), at: iso(Number(r.created_at)), label: String(r.label) };
  }
  const r = queryRows(db, 'SELECT kind, scope, coalesce(note_date, indexed_at) AS at, coalesce(title, path) AS label FROM vault_files WHERE path = ? AND retired_at IS NULL', [ref.slice(5)])[0];
  return r && { id: ref, kind: String(r.kind), scope: String(r.scope), at: iso(Number(r.at)), label: String(r.label), ...(chunk !== undefined ? { chunk } : {}) };
}

export function entities(db: Database, limit: number, q: string | undefined, scope: string | undefined) {
  const where = new Conditions('retired_at IS NULL').addIf(scope, 'scope = ?');
  if (q !== undefined) {
    const words = contentWords(q);
    if (!words.length) return { items: [], total: 0 };
    where.add(`(${words.map(() => 'subject_key LIKE ?').join(' OR ')})`, ...words.map((w) => `%${w.replace(/[%_]/g, '')}%`));
  }
  const grouped = `SELECT subject_key, count(*) AS facts, sum(superseded_at IS NULL) AS current, max(recorded_at) AS last,
      (SELECT subject FROM facts f2 WHERE f2.subject_key = f.subject_key ORDER BY recorded_at DESC LIMIT 1) AS name
    FROM facts f WHERE ${where.sql} GROUP BY subject_key`;
  const rows = queryRows(db, `${grouped} ORDER BY last DESC LIMIT ?`, [...where.params, limit]);
  const total = Number(queryScalar(db, `SELECT count(*) FROM (${grouped})`, where.params) ?? 0);
  return { items: rows.map((r) => ({ name: String(r.name), facts: Number(r.facts), current_facts: Number(r.current), last_recorded_at: iso(Number(r.last)) })), total };
}

function topics(db: Database, limit: number, q: string | undefined, scope: string | undefined) {
  const counts = new Map<string, { kind: 'tag' | 'folder'; count: number }>();
  const bump = (topic: string, kind: 'tag' | 'folder') => {
    const k = `${kind}:${topic}`;
    const c = counts.get(k);
    if (c) c.count++;
    else counts.set(k, { kind, count: 1 });
  };
  const files = new Conditions('retired_at IS NULL').addIf(scope, 'scope = ?');
  for (const r of queryRows(db, `SELECT path, kind, tags FROM vault_files WHERE ${files.sql}`, files.params)) {
    for (const t of parseList(r.tags)) bump(t, 'tag');
    const path = String(r.path).replace(/^projects\/[^/]+\//, '');
    if (r.kind !== 'daily' && path.includes('/')) bump(path.slice(0, path.indexOf('/')), 'folder');
  }
  const entries = new Conditions('retired_at IS NULL').add("text LIKE '%#%'").addIf(scope, 'scope = ?');
  for (const r of queryRows(db, `SELECT text FROM notes WHERE ${entries.sql}`, entries.params)) for (const t of inlineTags(String(r.text))) bump(t, 'tag');
  const words = q === undefined ? undefined : contentWords(q);
  const items = [...counts.entries()]
    .map(([k, v]) => ({ topic: k.slice(k.indexOf(':') + 1), kind: v.kind, count: v.count }))
    .filter((t) => !words || words.some((w) => t.topic.toLowerCase().includes(w)))
    .sort((a, b) => b.count - a.count || a.topic.localeCompare(b.topic));
  return { items: items.slice(0, limit), total: items.length };
}

function facts(db: Database, limit: number, refs: { ref: string }[] | undefined, scope: string | undefined) {
  let keys: Record<string, SqlValue>[];
  let total: number;
  if (refs) {
    const ids = refs.filter((r) => r.ref.startsWith('fact:')).map((r) => r.ref.slice(5));
    const rows = ids.length ? queryRows(db, `SELECT id, subject_key, predicate_key, scope FROM facts WHERE id IN (${ids.map(() => '?').join(',')})`, ids) : [];
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    keys = ids.map((id) => byId.get(id)).filter((r): r is Record<string, SqlValue> => r !== undefined);
    total = keys.length;
  } else {
    const where = new Conditions('retired_at IS NULL').addIf(scope, 'scope = ?');
    keys = queryRows(db, `SELECT subject_key, predicate_key, scope, max(recorded_at) AS last FROM facts WHERE ${where.sql} GROUP BY subject_key, predicate_key, scope ORDER BY last DESC LIMIT ?`, [...where.params, limit]);
    total = Number(queryScalar(db, `SELECT count(*) FROM (SELECT 1 FROM facts WHERE ${where.sql} GROUP BY subject_key, predicate_key, scope)`, where.params) ?? 0);
  }
  const items = keys.slice(0, limit).map((k) => {
    const values = queryRows(
      db,
      `SELECT id, subject, predicate, object, source, recorded_at, superseded_at, coalesce(valid_from, recorded_at) AS vf, coalesce(valid_to, superseded_at) AS vt
         FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? AND retired_at IS NULL ORDER BY recorded_at DESC, id DESC LIMIT ?`,
      [k.subject_key as string, k.predicate_key as string, k.scope as string, HISTORY_PER_FACT + 1],
    );
    const first = values[0];
    return {
      subject: String(first?.subject ?? ''),
      predicate: String(first?.predicate ?? ''),
      scope: String(k.scope),
      values: values.slice(0, HISTORY_PER_FACT).map((v) => ({
        id: `fact:${String(v.id)}`,
        object: String(v.object),
        status: v.superseded_at === null ? 'current' : 'historical',
        valid_from: iso(Number(v.vf)),
        valid_to: v.vt === null ? null : iso(Number(v.vt)),
        recorded_at: iso(Number(v.recorded_at)),
        source: String(v.source),
      })),
      ...(values.length > HISTORY_PER_FACT ? { more_history: true } : {}),
    };
  });
  return { items, total };
}

export function retired(db: Database, limit: number, q: string | undefined, scope: string | undefined) {
  const words = q === undefined ? [] : contentWords(q);
  const match = (col: string) => (words.length ? ` AND (${words.map(() => `lower(${col}) LIKE ?`).join(' OR ')})` : '');
  const params = words.map((w) => `%${w.replace(/[%_]/g, '')}%`);
  const scoped = scope ? ' AND scope = ?' : '';
  const sp = scope ? [scope] : [];
  const sql = `SELECT * FROM (
      SELECT 'fact:' || id AS id, 'fact' AS kind, scope, retired_at, substr(subject || ' · ' || predicate || ' → ' || object, 1, ${EXCERPT}) AS label FROM facts
        WHERE retired_at IS NOT NULL${scoped}${match("subject || ' ' || predicate || ' ' || object")}
      UNION ALL
      SELECT id, 'entry', scope, retired_at, substr(text, 1, ${EXCERPT}) FROM notes WHERE retired_at IS NOT NULL${scoped}${match('text')}
      UNION ALL
      SELECT 'note:' || path, kind, scope, retired_at, coalesce(title, path) FROM vault_files WHERE retired_at IS NOT NULL AND kind != 'daily'${scoped}${match("coalesce(title, '') || ' ' || path")}
    )`;
  const all = [...sp, ...params, ...sp, ...params, ...sp, ...params];
  const rows = queryRows(db, `${sql} ORDER BY retired_at DESC LIMIT ?`, [...all, limit]);
  const total = Number(queryScalar(db, `SELECT count(*) FROM (${sql})`, all) ?? 0);
  return { items: rows.map((r) => ({ id: String(r.id), kind: String(r.kind), scope: String(r.scope), retired_at: iso(Number(r.retired_at)), label: String(r.label) })), total };
}
