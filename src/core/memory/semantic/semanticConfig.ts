import { EMBEDDINGS_ENV, embeddingConfigFromEnv, type EmbeddingConfig } from './embeddingClient';
import { bundledModel, localModelMissing, type LocalModelConfig } from './localModel';

/** Which model semantic recall uses: the bundled one, an endpoint, or none (with the reason). */
export type SemanticConfig = LocalModelConfig | EmbeddingConfig | { missing: string };

/** `RECOLLECT_EMBEDDINGS=off` turns semantic recall off (the bundled model never starts). */
export const SEMANTIC_SWITCH_ENV = 'RECOLLECT_EMBEDDINGS';

/**
 * The bundled model (in `distDir`, beside the bundles) unless an endpoint is configured: the
 * environment's RECOLLECT_EMBEDDINGS_URL, else the VS Code setting. An endpoint configured
 * without its model is reported, not silently replaced by the bundled model.
 */
export function semanticConfigFrom(env: NodeJS.ProcessEnv, settings: { url?: string | undefined; model?: string | undefined }, distDir: string): SemanticConfig {
  if (env[SEMANTIC_SWITCH_ENV]?.trim().toLowerCase() === 'off') return { missing: `semantic recall is off (${SEMANTIC_SWITCH_ENV}=off)` };
  if (env[EMBEDDINGS_ENV.url]?.trim() || settings.url?.trim()) return embeddingConfigFromEnv(env, settings);
  const local = bundledModel(distDir);
  const missing = localModelMissing(local);
  return missing ? { missing: `${missing}; or set ${EMBEDDINGS_ENV.url} to an OpenAI-compatible embeddings endpoint` } : local;
}
