import type { Store } from '../../store/store';
import { queryRows, queryScalar, type SqlValue } from '../../store/sqlite';
import { EMBED_BATCH, EmbeddingClient, embeddingConfigFromEnv, type EmbeddingConfig } from './embeddingClient';
import { textHash, type EmbeddingsStored } from './semanticSchema';
import { VectorCache } from './vectorCache';

/** How long a probe's outcome stands before memory_status asks the endpoint again. */
const PROBE_TTL_MS = 60_000;
const PROBE_TIMEOUT_MS = 3_000;
const QUERY_TIMEOUT_MS = 15_000;
const BATCH_TIMEOUT_MS = 60_000;
/** search_memory embeds at most this many not-yet-embedded memories before it answers; index_memory does the rest. */
export const SEARCH_BACKFILL = 256;

export interface SemanticState {
  semantic: boolean;
  reason: string | null;
  model: string | null;
  endpoint: string | null;
}

export interface BackfillOutcome {
  embedded: number;
  remaining: number;
  error?: string;
}

/**
 * Semantic recall, on only where an embedding provider is configured. Memories (day-log
 * entries, note chunks, fact values) are embedded once and kept; a search embeds its query and
 * ranks every kept vector by cosine similarity.
 */
export class SemanticService {
  private readonly client: EmbeddingClient | undefined;
  private readonly missingReason: string | undefined;
  private lastProbe: { at: number; error: string | undefined } | undefined;
  private readonly vectors: VectorCache;

  constructor(
    private readonly store: Store,
    config: EmbeddingConfig | { missing: string } = embeddingConfigFromEnv(),
  ) {
    if ('missing' in config) this.missingReason = config.missing;
    else this.client = new EmbeddingClient(config);
    this.vectors = new VectorCache(store);
  }

  get configured(): boolean {
    return this.client !== undefined;
  }

  /** What is known now, without a network call. */
  state(): SemanticState {
    if (!this.client) return { semantic: false, reason: this.missingReason ?? 'no embedding provider is configured', model: null, endpoint: null };
    const error = this.lastProbe?.error;
    return { semantic: error === undefined, reason: error ?? null, model: this.client.config.model, endpoint: this.client.endpoint };
  }

  /** Asks the endpoint for one vector (at most once a minute), so `semantic` says whether it can answer now. */
  async probe(): Promise<SemanticState> {
    if (this.client && (!this.lastProbe || this.store.now - this.lastProbe.at > PROBE_TTL_MS)) {
      try {
        await this.client.embed(['recollect probe'], PROBE_TIMEOUT_MS);
        this.lastProbe = { at: this.store.now, error: undefined };
      } catch (err) {
        this.lastProbe = { at: this.store.now, error: (err as Error).message };
      }
    }
    return this.state();
  }

  /** Embeds up to `max` memories that have no vector for the configured model yet. */
  async backfill(max: number): Promise<BackfillOutcome> {
    const client = this.client;
    if (!client) return { embedded: 0, remaining: 0, error: this.missingReason };
    let embedded = 0;
    while (embedded < max) {
      const todo = this.missing(Math.min(EMBED_BATCH, max - embedded));
      if (!todo.length) break;
      let vectors: Float32Array[];
      try {
        vectors = await client.embed(todo.map((t) => t.text), BATCH_TIMEOUT_MS);
        this.lastProbe = { at: this.store.now, error: undefined };
      } catch (err) {
        this.lastProbe = { at: this.store.now, error: (err as Error).message };
        return { embedded, remaining: this.missingCount(), error: (err as Error).message };
      }
      const dims = vectors[0]?.length ?? 0;
      const bytes = new Uint8Array(todo.length * dims * 4);
      const view = new Float32Array(bytes.buffer);
      vectors.forEach((v, i) => view.set(v, i * dims));
      const blob = this.store.blobs.put(bytes);
      await this.store.commit(() => {
        const op: EmbeddingsStored = { op: 'memory.embeddings.stored', at: this.store.now, model: client.config.model, dims, blob, items: todo.map((t) => ({ key: t.key, textHash: textHash(t.text) })) };
        return { op, result: undefined };
      });
      embedded += todo.length;
    }
    return { embedded, remaining: this.missingCount() };
  }

  /** The query's vector, or why there is none. */
  async embedQuery(query: string): Promise<Float32Array | { error: string }> {
    if (!this.client) return { error: this.missingReason ?? 'no embedding provider is configured' };
    try {
      const [v] = await this.client.embed([query], QUERY_TIMEOUT_MS);
      this.lastProbe = { at: this.store.now, error: undefined };
      return v as Float32Array;
    } catch (err) {
      this.lastProbe = { at: this.store.now, error: (err as Error).message };
      return { error: (err as Error).message };
    }
  }

  /** Every kept vector for the model, ranked by cosine similarity to `query`, best first. */
  rank(query: Float32Array): { key: string; similarity: number }[] {
    const model = this.client?.config.model;
    return model ? this.vectors.rank(model, query) : [];
  }

  private missing(limit: number): { key: string; text: string }[] {
    const model = this.client?.config.model ?? '';
    return queryRows(this.store.db, `${MISSING_SQL} LIMIT ?`, [model, model, model, limit]).map((r: Record<string, SqlValue>) => ({ key: String(r.key), text: String(r.text) }));
  }

  missingCount(): number {
    const model = this.client?.config.model;
    if (!model) return 0;
    return Number(queryScalar(this.store.db, `SELECT count(*) FROM (${MISSING_SQL})`, [model, model, model]) ?? 0);
  }
}

// Promoted history notes are searched by words only (search_history is lexical by contract).
const MISSING_SQL = `
  SELECT n.id AS key, n.text AS text FROM notes n
    WHERE n.retired_at IS NULL AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = n.id AND e.model = ?)
  UNION ALL
  SELECT 'chunk:' || c.file_id || ':' || c.seq, c.text FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
    WHERE f.retired_at IS NULL AND f.kind = 'note' AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = 'chunk:' || c.file_id || ':' || c.seq AND e.model = ?)
  UNION ALL
  SELECT 'fact:' || x.id, x.subject || ' ' || x.predicate || ' ' || x.object FROM facts x
    WHERE x.retired_at IS NULL AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = 'fact:' || x.id AND e.model = ?)`;
