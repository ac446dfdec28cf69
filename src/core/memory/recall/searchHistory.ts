import { searchFts, snippets } from '../../search/ftsSearch';
import type { Store } from '../../store/store';
import { queryRows } from '../../store/sqlite';
import { iso } from '../../text/time';
import { absolutePath, historyFolders } from '../vault/vaultLayout';
import { HISTORY_NOTES_FTS } from '../vault/vaultSchema';
import { contentWords } from './queryWords';

export interface SearchHistoryInput {
  query: string;
  limit?: number | undefined;
}

/**
 * search_history: lexical search over the chat-history notes the owner promoted into the
 * vault's `history/` folders, answered as citations (file, lines, excerpt, where the note came
 * from). "Promoted" is a person's act: only what they put in those folders is searched, never
 * the raw imported transcripts (chat_history reads those). Deterministic: BM25 relevance, ties
 * by date then index order; every word must match, and only when nothing does, any word may.
 */
export function searchHistory(store: Store, root: string, index: () => { stale: boolean; changed_files: number }, input: SearchHistoryInput) {
  const folders = historyFolders(root);
  if (!folders.length) {
    return {
      ok: true as const,
      configured: false,
      reason: `history search is not configured: there is no promoted-history folder. The owner sets it up by creating ${absolutePath(root, 'history')} (or projects/<slug>/history/ inside the vault), putting the chat-history notes to keep there as Markdown, and running index_memory.`,
      results: [],
    };
  }
  const limit = input.limit ?? 5;
  const db = store.db;
  let match: 'all' | 'any' = 'all';
  let found = searchFts(db, HISTORY_NOTES_FTS, { query: input.query, limit, sort: 'relevance', now: store.now });
  if (found.ok && !found.hits.length && contentWords(input.query).length > 1) {
    match = 'any';
    found = searchFts(db, HISTORY_NOTES_FTS, { query: contentWords(input.query).join(' '), limit, sort: 'relevance', now: store.now, anyPhrase: true });
  }
  if (!found.ok) return { ok: false as const, reason: found.reason };
  const docids = found.hits.map((h) => h.docid);
  const excerpts = snippets(db, HISTORY_NOTES_FTS, found.match, docids, 24);
  const rows = new Map(
    (docids.length
      ? queryRows(
          db,
          `SELECT c.fts_docid, c.seq, c.line, c.text, f.path, f.scope, f.title, f.source, f.note_date, f.mtime_ms, f.indexed_at FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
            WHERE c.fts_docid IN (${docids.map(() => '?').join(',')}) AND f.kind = 'history' AND f.retired_at IS NULL`,
          docids,
        )
      : []
    ).map((r) => [Number(r.fts_docid), r]),
  );
  const results = found.hits.flatMap((h) => {
    const r = rows.get(h.docid);
    if (!r) return [];
    const path = String(r.path);
    const lines = String(r.text).replace(/\n+$/, '').split('\n').length;
    return [
      {
        id: `note:${path}`,
        title: r.title === null ? path : String(r.title),
        path,
        scope: String(r.scope),
        chunk: Number(r.seq),
        lines: { from: Number(r.line), to: Number(r.line) + lines - 1 },
        excerpt: excerpts.get(h.docid) ?? '',
        score: Math.round(h.bm25 * 1000) / 1000,
        provenance: {
          file: absolutePath(root, path),
          source: r.source === null ? null : String(r.source),
          date: r.note_date === null ? null : iso(Number(r.note_date)),
          modified_at: iso(Math.floor(Number(r.mtime_ms))),
          indexed_at: iso(Number(r.indexed_at)),
        },
      },
    ];
  });
  return { ok: true as const, configured: true, folders, query: input.query, match, results, total: found.total, index: index() };
}
