import { refuse, type Refusal } from '../../refusal';
import type { Store } from '../../store/store';
import { queryRows, type Database } from '../../store/sqlite';
import { iso } from '../../text/time';
import { scopeProblem } from '../scope';
import type { SemanticService } from '../semantic/semanticService';
import { semanticShare } from '../../search/fusion';
import { keywordMatches, rankMemories, type Candidate } from './memoryRanking';
import type { DocumentCounts } from './queryPruning';
import { contentWords } from './queryWords';

export interface SearchMemoryInput {
  query: string;
  top_k?: number | undefined;
  scope?: string | undefined;
  include_history?: boolean | undefined;
}

interface Hit {
  id: string;
  kind: 'entry' | 'note' | 'fact';
  text: string;
  scope: string;
  created_at: string;
  /** Cosine similarity to the request, where the meaning search found it. */
  similarity?: number;
  status?: 'current' | 'historical';
  chunk?: number;
}

/** Semantic neighbours taken into the fusion beyond top_k: enough that a keyword match can lift one. */
const SEMANTIC_POOL = 200;

/**
 * search_memory: notes (entries, note chunks) and fact values by meaning, with the bundled
 * model or a configured endpoint. The semantic neighbours are ranked together with the
 * request's keyword matches, on get_context's scale (memoryRanking.ts): a small model alone
 * finds less than keyword search on conversations, and a memory close in meaning that also
 * shares the request's rare words is the better answer. Where semantic
 * recall is off it answers no hits and why, and points at search_text.
 */
export async function searchMemory(store: Store, semantic: SemanticService, input: SearchMemoryInput, counts: DocumentCounts): Promise<object | Refusal> {
  if (input.scope !== undefined) {
    const bad = scopeProblem(input.scope);
    if (bad) return refuse(bad);
  }
  const off = (reason: string) => ({ ok: true, semantic: false, reason, hits: [], hint: 'search_text answers keyword queries without embeddings' });
  if (!semantic.configured) return off(semantic.state().reason ?? 'no embedding model is configured');
  // A memory saved a moment ago may not be indexed yet: a few are embedded now, ahead of the background indexer.
  const filled = await semantic.backfill(semantic.searchBackfill, ['memory'], true);
  const topK = input.top_k ?? 20;
  const pending = semantic.nearest(input.query, { corpus: 'memory', k: Math.max(topK, SEMANTIC_POOL), scope: input.scope, includeHistory: input.include_history });
  const db = store.db;
  const words = contentWords(input.query);
  const keyword = words.length ? keywordMatches(db, store.version, store.now, words, input.scope, 0, counts).hits : [];
  const found = await pending;
  if (!found.ok) return off(found.reason);
  const best = keyword.reduce((m, h) => Math.max(m, h.bm25), 0);
  const ranked: { key: string; score: number; docid: number }[] = keysOf(db, rankMemories(db, keyword, found.hits, false));
  // Superseded values are in no keyword index: they rank by meaning alone.
  for (const h of found.hits) if (h.docid === null) ranked.push({ key: h.key, score: semanticShare(best, h.similarity), docid: -1 });
  ranked.sort((a, b) => b.score - a.score || b.docid - a.docid);
  const top = ranked.slice(0, topK * 2);
  const similarity = new Map(found.hits.map((h) => [h.key, h.similarity]));
  const items = resolve(store, top.map((c) => c.key));
  const hits: Hit[] = [];
  for (const c of top) {
    const item = items.get(c.key);
    const sim = similarity.get(c.key);
    if (item && hits.length < topK) hits.push({ ...item, ...(sim !== undefined ? { similarity: sim } : {}) });
  }
  return {
    ok: true,
    semantic: true,
    model: found.model,
    query: input.query,
    hits,
    ...(filled.remaining ? { not_embedded: filled.remaining, note: `${filled.remaining} memories have no vector yet and were not searched; they are being indexed in the background (memory_status shows how far), and index_memory embeds them now` } : {}),
    ...(filled.error ? { embedding_error: filled.error } : {}),
  };
}

/** The embedding key of each ranked memory-index row: entries and facts by their ref, note chunks by file and chunk. */
function keysOf(db: Database, ranked: readonly Candidate[]): { key: string; score: number; docid: number }[] {
  const chunkDocids = ranked.filter((c) => c.ref.startsWith('note:')).map((c) => c.docid);
  const chunkKeys = new Map(
    chunkDocids.length
      ? queryRows(db, 'SELECT fts_docid, file_id, seq FROM note_chunks WHERE fts_docid IN (SELECT value FROM json_each(?))', [JSON.stringify(chunkDocids)]).map((r) => [
          Number(r.fts_docid),
          `chunk:${String(r.file_id)}:${Number(r.seq)}`,
        ])
      : [],
  );
  const out: { key: string; score: number; docid: number }[] = [];
  for (const c of ranked) {
    const key = c.ref.startsWith('note:') ? chunkKeys.get(c.docid) : c.ref;
    if (key) out.push({ key, score: c.score, docid: c.docid });
  }
  return out;
}

/** Live memories behind embedding keys (retired ones and history-folder notes are absent). */
function resolve(store: Store, keys: string[]): Map<string, Omit<Hit, 'similarity'>> {
  const db = store.db;
  const out = new Map<string, Omit<Hit, 'similarity'>>();
  const entries = keys.filter((k) => k.startsWith('entry:'));
  const facts = keys.filter((k) => k.startsWith('fact:')).map((k) => k.slice(5));
  const chunks = keys.filter((k) => k.startsWith('chunk:'));
  const list = (n: number) => Array.from({ length: n }, () => '?').join(',');
  if (entries.length) {
    for (const r of queryRows(db, `SELECT id, text, scope, created_at FROM notes WHERE retired_at IS NULL AND id IN (${list(entries.length)})`, entries)) {
      out.set(String(r.id), { id: String(r.id), kind: 'entry', text: String(r.text), scope: String(r.scope), created_at: iso(Number(r.created_at)) });
    }
  }
  if (facts.length) {
    for (const r of queryRows(db, `SELECT id, subject, predicate, object, scope, recorded_at, superseded_at FROM facts WHERE retired_at IS NULL AND id IN (${list(facts.length)})`, facts)) {
      out.set(`fact:${String(r.id)}`, {
        id: `fact:${String(r.id)}`,
        kind: 'fact',
        text: `${String(r.subject)} · ${String(r.predicate)} → ${String(r.object)}`,
        scope: String(r.scope),
        created_at: iso(Number(r.recorded_at)),
        status: r.superseded_at === null ? 'current' : 'historical',
      });
    }
  }
  if (chunks.length) {
    const parsed = chunks.map((k) => /^chunk:(.+):(\d+)$/.exec(k)).filter((m): m is RegExpExecArray => m !== null);
    const fileIds = [...new Set(parsed.map((m) => m[1] as string))];
    const wanted = new Set(chunks);
    const rows = queryRows(
      db,
      `SELECT c.file_id, c.seq, c.text, f.path, f.scope, coalesce(f.note_date, f.indexed_at) AS at FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
        WHERE f.retired_at IS NULL AND f.kind = 'note' AND c.file_id IN (${list(fileIds.length)})`,
      fileIds,
    );
    for (const r of rows) {
      const key = `chunk:${String(r.file_id)}:${Number(r.seq)}`;
      if (!wanted.has(key)) continue;
      out.set(key, { id: `note:${String(r.path)}`, kind: 'note', text: String(r.text), scope: String(r.scope), created_at: iso(Number(r.at)), chunk: Number(r.seq) });
    }
  }
  return out;
}
