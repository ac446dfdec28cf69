import type { Store } from '../../store/store';
import type { Embedder } from './embedder';
import { EmbeddingClient } from './embeddingClient';
import { LocalEmbedder } from './localModel';
import { semanticConfigFrom, type SemanticConfig } from './semanticConfig';
import { corpusCounts, missing, missingCount, resolveKeys, type Todo } from './semanticCorpora';
import type { Corpus, EmbeddingsStored } from './semanticSchema';
import { BUDGET_ENV, processMemory } from '../../store/memoryBudget';
import { queryScalar, type Database } from '../../store/sqlite';
import { encodeVectors, VECTOR_ENCODING } from './vectorCodec';
import { VectorCache, type RankingOptions } from './vectorCache';

export type { Corpus } from './semanticSchema';

/** How long a probe's outcome stands before memory_status asks the model again. */
const PROBE_TTL_MS = 60_000;
const PROBE_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 15_000;
const BATCH_TIMEOUT_MS = 120_000;
/** Ranked keys resolved at a time, at least: one statement per slice. */
const RESOLVE_SLICE = 64;
/** How often the background indexer looks for new writes (one stat when nothing changed). */
const POLL_MS = 2_000;
/** After a failed batch the background indexer waits this long before trying again. */
const RETRY_MS = 60_000;
/**
 * The background indexer starts no batch while the process holds more than this share of its
 * memory budget: a batch adds the model's activations, a blob and unsaved chunks, and what the
 * process holds past the budget is what nothing else can give back (the chunk cache already
 * gave its share up to the model and the vectors). It goes on at a later poll.
 */
const PAUSE_AT = 0.9;

export interface SemanticState {
  semantic: boolean;
  reason: string | null;
  model: string | null;
  provider: 'local' | 'endpoint' | null;
  /** The endpoint's URL, or the bundled model's folder. */
  source: string | null;
  /** The bundled model: whether its thread holds it now (it stops when idle); null for an endpoint. */
  loaded: boolean | null;
}

export interface BackfillOutcome {
  embedded: number;
  remaining: number;
  error?: string;
}

export interface CorpusProgress {
  indexed: number;
  total: number;
}

/** How far indexing has got, as memory_status and the VS Code progress report it. */
export interface IndexProgress {
  model: string;
  provider: 'local' | 'endpoint';
  indexed: number;
  total: number;
  memory: CorpusProgress;
  history: CorpusProgress;
  /** A background pass is running now. */
  indexing: boolean;
  /** Why the last batch failed, if it did. */
  error?: string;
  /** Why background indexing waits (the process is near its memory budget), if it does. */
  paused?: string;
}

export interface NearestOptions {
  corpus: Corpus;
  k: number;
  /** memory: only this scope; history: only this source (vscode, claude-code, codex…). */
  scope?: string | undefined;
  /** memory: also superseded fact values. Default false. */
  includeHistory?: boolean | undefined;
  /** Epoch ms bounds on the item's time (history: the event's time). */
  since?: number | undefined;
  before?: number | undefined;
  timeoutMs?: number | undefined;
}

export interface NearestHit {
  /** entry:<…>, chunk:<file>:<seq>, fact:<id> (memory) or event:<id> (history). */
  key: string;
  /** The item's docid in memory_fts / history_fts (history: the event id); null for a superseded fact. */
  docid: number | null;
  /** Cosine similarity with the query, -1 to 1. */
  similarity: number;
}

export type NearestResult = { ok: true; model: string; hits: NearestHit[]; indexed: number } | { ok: false; reason: string };

/**
 * Semantic recall. Memories (day-log entries, note chunks, fact values) and imported chat
 * messages are embedded once, in the background as they are written and imported, and kept in
 * the store; a search embeds only its query and ranks the kept vectors by cosine similarity.
 * The model is the bundled one (a worker thread) unless an OpenAI-compatible endpoint is
 * configured.
 */
export class SemanticService {
  private readonly embedder: Embedder | undefined;
  private readonly missingReason: string | undefined;
  private lastProbe: { at: number; error: string | undefined } | undefined;
  private readonly vectors: VectorCache;
  /** Batches run one at a time: a search's fill-in waits for the batch in flight, never a whole pass. */
  private lock: Promise<unknown> = Promise.resolve();
  private pass: Promise<void> | undefined;
  private poller: NodeJS.Timeout | undefined;
  private seenVersion = -1;
  private failedAt: number | undefined;
  private lastError: string | undefined;
  private paused: string | undefined;
  private closed = false;
  private warmed = false;
  private readonly listeners = new Set<(p: IndexProgress) => void>();
  private running: { memory: CorpusProgress; history: CorpusProgress } | undefined;

  constructor(
    private readonly store: Store,
    config: SemanticConfig = semanticConfigFrom(process.env, {}, __dirname),
    ranking?: RankingOptions,
  ) {
    if ('missing' in config) this.missingReason = config.missing;
    else this.embedder = 'local' in config ? new LocalEmbedder(config, (bytes) => store.reserveMemory('embedding_model', bytes)) : new EmbeddingClient(config);
    this.vectors = new VectorCache(store, ranking);
    store.onClose(() => this.close());
  }

  get configured(): boolean {
    return this.embedder !== undefined;
  }

  get model(): string | undefined {
    return this.embedder?.model;
  }

  /** What is known now, without calling the model. */
  state(): SemanticState {
    const e = this.embedder;
    if (!e) return { semantic: false, reason: this.missingReason ?? 'no embedding model is configured', model: null, provider: null, source: null, loaded: null };
    const error = this.lastProbe?.error;
    return { semantic: error === undefined, reason: error ?? null, model: e.model, provider: e.provider, source: e.source, loaded: e.loaded ?? null };
  }

  /**
   * Asks the model for one vector (at most once a minute), so `semantic` says whether it can
   * answer now. A bundled model whose thread is not running (not started yet, or stopped for
   * being idle) is not started for this: starting it costs its whole reservation in the
   * budget, which a one-shot process such as an import asking memory_status cannot spare. Its
   * files are there (or it would not be configured) and its last answer, if any, stands; the
   * next search starts it and reports a failure to load.
   */
  async probe(): Promise<SemanticState> {
    const idle = this.embedder?.idle === true && this.lastProbe?.error === undefined;
    if (this.embedder && !idle && (!this.lastProbe || this.store.now - this.lastProbe.at > PROBE_TTL_MS)) {
      await this.embedQuery('recollect probe', PROBE_TIMEOUT_MS);
    }
    return this.state();
  }

  /** Counts per corpus, read from the store now. */
  progress(): IndexProgress | undefined {
    const e = this.embedder;
    if (!e) return undefined;
    return this.report(corpusProgress(this.store.db, 'memory', e.model), corpusProgress(this.store.db, 'history', e.model));
  }

  /** Called with the progress after every background batch, and once when a pass ends. */
  onProgress(listener: (p: IndexProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Indexes in the background from now on: whenever the store changed (a write here, an
   * import, another process's write), a pass embeds everything without a vector, batch by
   * batch, memories before chat history. The timer never keeps a process alive.
   */
  startBackground(pollMs = POLL_MS): void {
    if (!this.embedder || this.poller || this.closed) return;
    // The first look is one interval away, so a short CLI command that opens a store never starts the model.
    this.poller = setInterval(() => this.kick(), pollMs);
    this.poller.unref();
  }

  /** Starts a background pass now if the store changed since the last one. */
  kick(): void {
    if (this.closed || this.pass || !this.embedder) return;
    if (!this.warmed) {
      // The first ranking after an open reads every kept vector (about a second for 70,000):
      // done here, between tool calls, rather than inside the first search.
      this.warmed = true;
      this.vectors.size(this.embedder.model, 'memory');
      this.vectors.size(this.embedder.model, 'history');
    }
    if (this.failedAt !== undefined && this.store.now - this.failedAt < RETRY_MS) return;
    this.paused = memoryPressure(this.store);
    if (this.paused) return;
    this.store.refresh();
    if (this.store.version === this.seenVersion) return;
    this.pass = this.runPass()
      .catch((err: unknown) => {
        // A pass cut short (the store closed under it) loses nothing: what it did not commit is found missing next time.
        if (!this.closed) {
          this.lastError = err instanceof Error ? err.message : String(err);
          this.failedAt = this.store.now;
        }
      })
      .finally(() => (this.pass = undefined));
  }

  /** Resolves when no background pass is running (tests, the eval, the bench). */
  async idle(): Promise<void> {
    while (this.pass) await this.pass;
  }

  /**
   * Embeds up to `max` items of `corpora` that have no vector yet, in batches, and returns what
   * is left. Runs alongside the background indexer: each batch waits for the one in flight.
   */
  async backfill(max: number, corpora: readonly Corpus[] = ['memory'], priority = false): Promise<BackfillOutcome> {
    const e = this.embedder;
    if (!e) return { embedded: 0, remaining: 0, error: this.missingReason };
    let embedded = 0;
    while (embedded < max && !this.closed) {
      const step = await this.batch(corpora, Math.min(this.embedder?.indexBatch ?? 1, max - embedded), priority);
      if (step.error) return { embedded, remaining: this.remaining(corpora), error: step.error };
      if (!step.embedded) break;
      embedded += step.embedded;
    }
    return { embedded, remaining: this.remaining(corpora) };
  }

  /** Every item of every corpus embedded (or an error): the eval and the bench call this before measuring. */
  indexAll(): Promise<BackfillOutcome> {
    return this.backfill(Number.MAX_SAFE_INTEGER, ['memory', 'history']);
  }

  /** The query's vector, or why there is none. Goes ahead of queued background work. */
  async embedQuery(query: string, timeoutMs = QUERY_TIMEOUT_MS): Promise<Float32Array | { error: string }> {
    const e = this.embedder;
    if (!e) return { error: this.missingReason ?? 'no embedding model is configured' };
    try {
      const [v] = await e.embed([query], timeoutMs, true);
      this.lastProbe = { at: this.store.now, error: undefined };
      return v as Float32Array;
    } catch (err) {
      this.lastProbe = { at: this.store.now, error: (err as Error).message };
      return { error: (err as Error).message };
    }
  }

  /**
   * The `k` items of a corpus nearest in meaning to `query`, best first, among those indexed so
   * far (an item written a moment ago may not be yet: `progress()` says how far indexing is).
   * Gone items (retired, deleted, changed since embedding) never appear; `scope`,
   * `includeHistory`, `since` and `before` filter as the keyword searches do.
   */
  async nearest(query: string, opts: NearestOptions): Promise<NearestResult> {
    const e = this.embedder;
    if (!e) return { ok: false, reason: this.missingReason ?? 'no embedding model is configured' };
    const q = await this.embedQuery(query, opts.timeoutMs);
    if ('error' in q) return { ok: false, reason: q.error };
    return { ok: true, model: e.model, hits: this.rank(q, opts), indexed: this.vectors.size(e.model, opts.corpus) };
  }

  /**
   * `nearest` for a query vector already made (the same model's). Superseded facts are left out
   * of the ranking itself unless history is asked for. The ranked keys are resolved in rank
   * order, a slice at a time, until `k` pass the filters: most of a slice passes, so few more
   * keys are read than are returned, and without a scope or a time range nearly all of it.
   */
  rank(query: Float32Array, opts: Omit<NearestOptions, 'timeoutMs'>): NearestHit[] {
    const e = this.embedder;
    if (!e || opts.k <= 0) return [];
    const size = this.vectors.size(e.model, opts.corpus);
    const db = this.store.db;
    const filtered = opts.scope !== undefined || opts.since !== undefined || opts.before !== undefined;
    let want = Math.min(size, Math.max(filtered ? opts.k * 4 : Math.ceil(opts.k * 1.25), 64));
    for (;;) {
      const ranked = this.vectors.ordered(e.model, opts.corpus, query, want, !opts.includeHistory);
      const hits: NearestHit[] = [];
      for (let at = 0; at < ranked.length; ) {
        const left = opts.k - hits.length;
        const slice = ranked.slice(at, at + Math.max(RESOLVE_SLICE, filtered ? 2 * left : left + (left >> 3)));
        at += slice.length;
        const found = resolveKeys(db, opts.corpus, e.model, slice.map((r) => r.key));
        for (const r of slice) {
          const item = found.get(r.key);
          if (!item) continue;
          if (opts.scope !== undefined && item.scope !== opts.scope) continue;
          if (item.historical && !opts.includeHistory) continue;
          if (opts.since !== undefined && (item.at === null || item.at < opts.since)) continue;
          if (opts.before !== undefined && (item.at === null || item.at >= opts.before)) continue;
          hits.push({ key: r.key, docid: item.docid, similarity: Math.round(r.similarity * 10_000) / 10_000 });
          if (hits.length >= opts.k) return hits;
        }
      }
      // The whole corpus was ranked, or a wider pool by sign may hold more that pass.
      if (ranked.length >= size || want >= size) return hits;
      want = Math.min(size, want * 4);
    }
  }

  /** How many items a search embeds before it answers, for this model. */
  get searchBackfill(): number {
    return this.embedder?.searchBackfill ?? 0;
  }

  missingCount(corpora: readonly Corpus[] = ['memory']): number {
    return this.remaining(corpora);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    this.embedder?.close();
    this.vectors.close();
  }

  private remaining(corpora: readonly Corpus[]): number {
    const e = this.embedder;
    if (!e || this.closed) return 0;
    const db = this.store.db;
    return corpora.reduce((n, c) => n + missingCount(db, c, e.model), 0);
  }

  private async runPass(): Promise<void> {
    const e = this.embedder;
    if (!e) return;
    const db = this.store.db;
    const memory = corpusProgress(db, 'memory', e.model);
    const history = corpusProgress(db, 'history', e.model);
    if (memory.indexed === memory.total && history.indexed === history.total) {
      this.seenVersion = this.store.version;
      return;
    }
    this.running = { memory, history };
    try {
      while (!this.closed) {
        this.paused = memoryPressure(this.store);
        if (this.paused) break; // seenVersion stays: the next poll tries again
        const step = await this.batch(['memory', 'history'], e.indexBatch, false);
        if (step.error) {
          this.failedAt = this.store.now;
          break;
        }
        if (!step.embedded) {
          this.seenVersion = this.store.version;
          break;
        }
        this.emit();
      }
    } finally {
      this.running = undefined;
      if (!this.closed) this.emit();
    }
  }

  /** One batch: up to `limit` items without a vector, from the corpora in order, embedded and committed. */
  private batch(corpora: readonly Corpus[], limit: number, priority: boolean): Promise<{ embedded: number; error?: string }> {
    const run = this.lock.then(async () => {
      const e = this.embedder;
      if (!e || this.closed) return { embedded: 0 };
      const db = this.store.db;
      const todo: Todo[] = [];
      for (const c of corpora) todo.push(...missing(db, c, e.model, limit - todo.length));
      if (!todo.length) return { embedded: 0 };
      let vectors: Float32Array[];
      try {
        vectors = await e.embed(todo.map((t) => t.text), BATCH_TIMEOUT_MS, priority);
        this.lastProbe = { at: this.store.now, error: undefined };
        this.lastError = undefined;
      } catch (err) {
        const error = (err as Error).message;
        this.lastProbe = { at: this.store.now, error };
        this.lastError = error;
        return { embedded: 0, error };
      }
      if (this.closed) return { embedded: 0 };
      const dims = vectors[0]?.length ?? 0;
      const blob = this.store.blobs.put(encodeVectors(vectors, dims));
      // Vectors are derived: a line lost to a crash before the next fsync is only recomputed.
      await this.store.commit((latest) => {
        // Another process (the MCP server beside the extension) may have stored the same vectors
        // meanwhile; the line is then left out. (Items keep their blob positions, so it is all or none.)
        const items = todo.map((t) => ({ key: t.key, textHash: t.hash }));
        if (items.every((t) => hasVector(latest, t.key, e.model, t.textHash))) return { result: undefined };
        const op: EmbeddingsStored = { op: 'memory.embeddings.stored', at: this.store.now, model: e.model, dims, encoding: VECTOR_ENCODING, blob, items };
        return { op, result: undefined };
      }, { durable: false });
      if (this.running) {
        for (const t of todo) {
          const p = t.key.startsWith('event:') ? this.running.history : this.running.memory;
          p.indexed = Math.min(p.total, p.indexed + 1);
        }
      }
      return { embedded: todo.length };
    });
    this.lock = run.catch(() => undefined);
    return run;
  }

  private emit(): void {
    if (!this.listeners.size) return;
    const p = this.running ? this.report(this.running.memory, this.running.history) : this.progress();
    if (!p) return;
    for (const l of this.listeners) l(p);
  }

  private report(memory: CorpusProgress, history: CorpusProgress): IndexProgress {
    const e = this.embedder as Embedder;
    return {
      model: e.model,
      provider: e.provider,
      indexed: memory.indexed + history.indexed,
      total: memory.total + history.total,
      memory: { ...memory },
      history: { ...history },
      indexing: this.running !== undefined,
      ...(this.lastError ? { error: this.lastError } : {}),
      ...(this.paused ? { paused: this.paused } : {}),
    };
  }
}

/** Why the process is too near its memory budget to start another background batch, or undefined. */
function memoryPressure(store: Store): string | undefined {
  const { rss } = processMemory();
  const budget = store.budget.budgetBytes;
  if (rss <= budget * PAUSE_AT) return undefined;
  const mb = (n: number) => Math.round(n / (1024 * 1024));
  return `indexing waits: this process holds ${mb(rss)} MB of its ${mb(budget)} MB memory budget (it goes on below ${mb(budget * PAUSE_AT)} MB; ${BUDGET_ENV} or recollect.memory.budgetMb raises the budget)`;
}

function hasVector(db: Database, key: string, model: string, hash: string): boolean {
  return queryScalar(db, 'SELECT 1 FROM embeddings WHERE key = ? AND model = ? AND text_hash = ?', [key, model, hash]) !== undefined;
}

function corpusProgress(db: Database, corpus: Corpus, model: string): CorpusProgress {
  const { total, missing: lacking } = corpusCounts(db, corpus, model);
  return { total, indexed: total - lacking };
}
