/**
 * What semantic recall needs from a model: vectors for texts, in order. Two kinds exist: the
 * model bundled with Recollect, run in a worker thread (localModel.ts), and an OpenAI-compatible
 * endpoint (embeddingClient.ts).
 */
export interface Embedder {
  /** The name vectors are stored under: vectors of two models are never compared. */
  readonly model: string;
  readonly provider: 'local' | 'endpoint';
  /** Where the vectors come from: the model's folder or the endpoint's URL. */
  readonly source: string;
  /** How many memories a search embeds before it answers (the rest are indexed in the background). */
  readonly searchBackfill: number;
  /**
   * Texts per background batch (one journal line and blob each). A search waits for the batch
   * in flight, so a slow model takes small ones.
   */
  readonly indexBatch: number;
  /**
   * One vector per text, in order. `priority` work (a query) goes ahead of bulk indexing.
   * Throws with a reason a person can act on.
   */
  embed(texts: readonly string[], timeoutMs: number, priority?: boolean): Promise<Float32Array[]>;
  /**
   * The bundled model only: whether its thread holds the model now, and whether the thread is
   * not running for no failure (not started yet, or stopped for being idle; the next embed starts it).
   */
  readonly loaded?: boolean;
  readonly idle?: boolean;
  close(): void;
}
