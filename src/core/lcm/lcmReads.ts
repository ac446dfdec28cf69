import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { queryRows, queryScalar, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import { countTokens } from '../text/tokens';
import { conversationIdOf, type ConversationScope } from './conversations';

export interface SummaryRow {
  id: string;
  sessionId: string;
  depth: number;
  kind: string;
  content: string;
  tokens: number;
  earliestAt: number | null;
  latestAt: number | null;
  createdAt: number;
  descendantCount: number;
  producer: string;
}

export interface SourceMessage {
  id: number;
  role: string;
  toolName: string | null;
  createdAt: string | null;
  /** The stored event's full text, byte for byte (from the blob store when it was large). */
  text: string;
  fileId: string | null;
}

/** Reads over the DAG: describe a summary or a file, and expand a summary one level down. */
export class LcmReads {
  constructor(private readonly store: Store) {}

  summary(id: string): SummaryRow | undefined {
    const r = queryRows(
      this.store.db,
      'SELECT id, session_id, depth, kind, content, tokens, earliest_at, latest_at, created_at, descendant_count, producer FROM lcm_summaries WHERE id = ?',
      [id],
    )[0];
    if (!r) return undefined;
    return {
      id: String(r.id), sessionId: String(r.session_id), depth: Number(r.depth), kind: String(r.kind), content: String(r.content), tokens: Number(r.tokens),
      earliestAt: num(r.earliest_at), latestAt: num(r.latest_at), createdAt: Number(r.created_at), descendantCount: Number(r.descendant_count), producer: String(r.producer),
    };
  }

  describe(id: string, scope: ConversationScope): object | Refusal {
    const trimmed = id.trim();
    if (trimmed.startsWith('sum_')) return this.describeSummary(trimmed, scope);
    if (trimmed.startsWith('file_')) return this.describeFile(trimmed, scope);
    return refuse(`"${trimmed.slice(0, 60)}" is not an LCM id: summaries are sum_…, stored files are file_… (lcm_grep returns them)`);
  }

  private describeSummary(id: string, scope: ConversationScope): object | Refusal {
    const s = this.summary(id);
    if (!s) return refuse(`there is no summary ${id}; lcm_grep with scope "summaries" lists the ones there are`);
    const outside = this.outside(s.sessionId, scope, id);
    if (outside) return outside;
    const db = this.store.db;
    const parentIds = queryRows(db, 'SELECT parent_id FROM lcm_summary_parents WHERE child_id = ?', [id]).map((r) => String(r.parent_id));
    const childIds = queryRows(db, 'SELECT child_id FROM lcm_summary_parents WHERE parent_id = ? ORDER BY ord', [id]).map((r) => String(r.child_id));
    const sourceMessageIds = queryRows(db, 'SELECT event_id FROM lcm_summary_sources WHERE summary_id = ? ORDER BY ord', [id]).map((r) => Number(r.event_id));
    const fileIds = queryRows(db, 'SELECT file_id FROM lcm_summary_files WHERE summary_id = ? ORDER BY file_id', [id]).map((r) => String(r.file_id));
    return {
      ok: true, type: 'summary', id, conversationId: conversationIdOf(db, s.sessionId), content: s.content, depth: s.depth, kind: s.kind, tokenCount: s.tokens,
      createdAt: iso(s.createdAt), earliestAt: time(s.earliestAt), latestAt: time(s.latestAt), descendantCount: s.descendantCount,
      messageCount: this.messageCount(id), parentIds, childIds, sourceMessageIds, fileIds, producer: s.producer,
    };
  }

  private describeFile(id: string, scope: ConversationScope): object | Refusal {
    const db = this.store.db;
    const f = queryRows(db, 'SELECT id, session_id, event_id, blob, file_name, mime_type, byte_size, tokens, exploration, created_at FROM lcm_files WHERE id = ?', [id])[0];
    if (!f) return refuse(`there is no stored file ${id}; file ids appear in summaries and in lcm_describe of a summary`);
    const outside = this.outside(String(f.session_id), scope, id);
    if (outside) return outside;
    const content = this.store.blobs.get(String(f.blob));
    if (!content) return refuse(`the content of ${id} (blob ${String(f.blob).slice(0, 12)}…) is missing from the blob store at ${this.store.blobs.pathOf(String(f.blob))}`);
    const citedBy = queryRows(db, 'SELECT summary_id FROM lcm_summary_files WHERE file_id = ? ORDER BY summary_id', [id]).map((r) => String(r.summary_id));
    return {
      ok: true, type: 'file', id, conversationId: conversationIdOf(db, String(f.session_id)), content: content.toString('utf8'), fileName: String(f.file_name),
      mimeType: String(f.mime_type), byteSize: Number(f.byte_size), tokenCount: Number(f.tokens), explorationSummary: String(f.exploration),
      storagePath: this.store.blobs.pathOf(String(f.blob)), storageEncoding: this.store.blobs.encodingOf(String(f.blob)) ?? 'none', createdAt: iso(Number(f.created_at)), sourceMessageId: Number(f.event_id), citedBy,
    };
  }

  /** Events covered beneath a summary, at every level. */
  messageCount(id: string): number {
    return Number(
      queryScalar(
        this.store.db,
        `WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT p.child_id FROM lcm_summary_parents p JOIN sub ON p.parent_id = sub.id)
         SELECT count(*) FROM lcm_summary_sources WHERE summary_id IN (SELECT id FROM sub)`,
        [id],
      ) ?? 0,
    );
  }

  /** A condensed summary's children (one level down), or a leaf's source messages verbatim. */
  expandOne(id: string): { summary: SummaryRow; children: SummaryRow[]; messages: SourceMessage[] } | undefined {
    const summary = this.summary(id);
    if (!summary) return undefined;
    const db = this.store.db;
    const children = queryRows(db, 'SELECT child_id FROM lcm_summary_parents WHERE parent_id = ? ORDER BY ord', [id])
      .map((r) => this.summary(String(r.child_id)))
      .filter((c): c is SummaryRow => !!c);
    const messages = this.sources(id);
    return { summary, children, messages };
  }

  sources(summaryId: string): SourceMessage[] {
    return queryRows(
      this.store.db,
      `SELECT e.id, e.kind, e.tool_name, e.created_at, e.text, e.blob, f.id AS file_id FROM lcm_summary_sources src JOIN events e ON e.id = src.event_id
       LEFT JOIN lcm_files f ON f.event_id = e.id WHERE src.summary_id = ? ORDER BY src.ord`,
      [summaryId],
    ).map((r) => ({
      id: Number(r.id), role: String(r.kind), toolName: r.tool_name === null ? null : String(r.tool_name), createdAt: time(num(r.created_at)),
      text: this.fullText(r.text, r.blob), fileId: r.file_id === null ? null : String(r.file_id),
    }));
  }

  /** Leaves beneath a summary (itself when it is one), oldest first. */
  leavesUnder(id: string): string[] {
    return queryRows(
      this.store.db,
      `WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT p.child_id FROM lcm_summary_parents p JOIN sub ON p.parent_id = sub.id)
       SELECT s.id FROM lcm_summaries s WHERE s.id IN (SELECT id FROM sub) AND s.kind = 'leaf' ORDER BY s.first_seq`,
      [id],
    ).map((r) => String(r.id));
  }

  fullText(inline: SqlValue | undefined, blob: SqlValue | undefined): string {
    if (typeof blob === 'string') {
      const full = this.store.blobs.get(blob);
      if (full) return full.toString('utf8');
    }
    return String(inline ?? '');
  }

  private outside(sessionId: string, scope: ConversationScope, id: string): Refusal | undefined {
    if (scope.all || scope.sessionId === sessionId) return undefined;
    const owner = conversationIdOf(this.store.db, sessionId);
    return refuse(`${id} belongs to conversation ${owner}, not to ${scope.how} (conversation ${scope.conversationId}); pass conversationId: ${owner} or allConversations: true`);
  }
}

/** Counting a message costs a tokenizer pass, so each expansion counts what it returns once. */
export function tokensOf(text: string): number {
  return countTokens(text);
}

function num(v: SqlValue | undefined): number | null {
  return v === null || v === undefined ? null : Number(v);
}

function time(v: number | null): string | null {
  return v === null ? null : iso(v);
}
