import type { Embedder } from './embedder';

/**
 * An OpenAI-compatible `/v1/embeddings` endpoint: OpenAI itself, a local Ollama
 * (`http://localhost:11434`), llama.cpp's server, LM Studio, vLLM. Nothing else is assumed.
 */
export interface EmbeddingConfig {
  /** Base URL (`http://localhost:11434`), `.../v1`, or the full `.../v1/embeddings`. */
  url: string;
  model: string;
  apiKey?: string | undefined;
}

export const EMBEDDINGS_ENV = {
  url: 'RECOLLECT_EMBEDDINGS_URL',
  model: 'RECOLLECT_EMBEDDINGS_MODEL',
  apiKey: 'RECOLLECT_EMBEDDINGS_API_KEY',
} as const;

/**
 * The configuration, or why there is none. The environment wins over the VS Code settings, as
 * RECOLLECT_HOME does over the store path: an MCP server another program starts sees only the
 * environment, and one variable then configures every surface alike. The API key is read from
 * the environment only, never from settings (which sync in plain text).
 */
export function embeddingConfigFromEnv(env: NodeJS.ProcessEnv = process.env, settings: { url?: string | undefined; model?: string | undefined } = {}): EmbeddingConfig | { missing: string } {
  const fromEnv = env[EMBEDDINGS_ENV.url]?.trim();
  const url = fromEnv || settings.url?.trim();
  const model = (fromEnv ? env[EMBEDDINGS_ENV.model]?.trim() : undefined) || settings.model?.trim() || env[EMBEDDINGS_ENV.model]?.trim();
  if (!url) {
    return {
      missing: `no embedding provider is configured: set ${EMBEDDINGS_ENV.url} to an OpenAI-compatible embeddings endpoint (for a local Ollama, http://localhost:11434) and ${EMBEDDINGS_ENV.model} to its model`,
    };
  }
  if (!model) return { missing: `${EMBEDDINGS_ENV.url} is set but ${EMBEDDINGS_ENV.model} is not: the endpoint needs a model name` };
  const apiKey = env[EMBEDDINGS_ENV.apiKey]?.trim();
  return { url, model, ...(apiKey ? { apiKey } : {}) };
}

export function endpointOf(url: string): string {
  const base = url.replace(/\/+$/, '');
  if (base.endsWith('/embeddings')) return base;
  if (base.endsWith('/v1')) return `${base}/embeddings`;
  return `${base}/v1/embeddings`;
}

/** Inputs per request: large enough to amortise a round trip, small enough for a local model's batch. */
export const EMBED_BATCH = 64;

export class EmbeddingClient implements Embedder {
  readonly endpoint: string;
  readonly provider = 'endpoint' as const;
  /** A remote model answers a batch in one round trip, so a search can afford to fill in more. */
  readonly searchBackfill = 256;
  readonly indexBatch = EMBED_BATCH;

  constructor(readonly config: EmbeddingConfig) {
    this.endpoint = endpointOf(config.url);
  }

  get model(): string {
    return this.config.model;
  }

  get source(): string {
    return this.endpoint;
  }

  close(): void {}

  /** One vector per text, in order. Throws with a reason a person can act on. */
  async embed(texts: readonly string[], timeoutMs: number): Promise<Float32Array[]> {
    if (!texts.length) return [];
    const res = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}) },
      body: JSON.stringify({ model: this.config.model, input: texts }),
      signal: AbortSignal.timeout(timeoutMs),
    }).catch((err: unknown) => {
      const e = err as Error & { cause?: { code?: string } };
      const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.code ?? e.message);
      throw new Error(`embedding endpoint ${this.endpoint} is unreachable: ${why}`);
    });
    if (!res.ok) {
      const body = (await res.text().catch(() => '')).slice(0, 200);
      throw new Error(`embedding endpoint ${this.endpoint} answered HTTP ${res.status}${body ? `: ${body}` : ''}`);
    }
    const json = (await res.json().catch(() => undefined)) as { data?: { embedding?: unknown; index?: unknown }[] } | undefined;
    const data = json?.data;
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw new Error(`embedding endpoint ${this.endpoint} returned ${Array.isArray(data) ? data.length : 'no'} vectors for ${texts.length} inputs`);
    }
    const ordered = [...data].sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
    const vectors = ordered.map((d) => {
      if (!Array.isArray(d.embedding) || !d.embedding.length || d.embedding.some((x) => typeof x !== 'number' || !Number.isFinite(x))) {
        throw new Error(`embedding endpoint ${this.endpoint} returned a vector that is not a list of numbers`);
      }
      return Float32Array.from(d.embedding as number[]);
    });
    const dims = vectors[0]?.length ?? 0;
    if (vectors.some((v) => v.length !== dims)) throw new Error(`embedding endpoint ${this.endpoint} returned vectors of different lengths`);
    return vectors;
  }
}
