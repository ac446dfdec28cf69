import { refuse, type Refusal } from '../../refusal';
import type { Store } from '../../store/store';
import { queryRows } from '../../store/sqlite';
import { iso } from '../../text/time';
import { scopeProblem } from '../scope';
import type { SemanticService } from '../semantic/semanticService';

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
  similarity: number;
  status?: 'current' | 'historical';
  chunk?: number;
}

/**
 * search_memory: notes (entries, note chunks) and fact values by meaning, with the bundled
 * model or a configured endpoint. Where semantic recall is off it answers no hits and why, and
 * points at search_text.
 */
export async function searchMemory(store: Store, semantic: SemanticService, input: SearchMemoryInput): Promise<object | Refusal> {
  if (input.scope !== undefined) {
    const bad = scopeProblem(input.scope);
    if (bad) return refuse(bad);
  }
  const off = (reason: string) => ({ ok: true, semantic: false, reason, hits: [], hint: 'search_text answers keyword queries without embeddings' });
  if (!semantic.configured) return off(semantic.state().reason ?? 'no embedding model is configured');
  // A memory saved a moment ago may not be indexed yet: a few are embedded now, ahead of the background indexer.
  const filled = await semantic.backfill(semantic.searchBackfill, ['memory'], true);
  const topK = input.top_k ?? 20;
  const found = await semantic.nearest(input.query, { corpus: 'memory', k: topK, scope: input.scope, includeHistory: input.include_history });
  if (!found.ok) return off(found.reason);
  const items = resolve(store, found.hits.map((h) => h.key));
  const hits: Hit[] = [];
  for (const h of found.hits) {
    const item = items.get(h.key);
    if (item) hits.push({ ...item, similarity: h.similarity });
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
