import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Services } from '../src/core/services';
import { bundledModel, LocalEmbedder, LOCAL_MODEL } from '../src/core/memory/semantic/localModel';
import { missing, type Todo } from '../src/core/memory/semantic/semanticCorpora';
import { semanticAppliers, type EmbeddingsStored } from '../src/core/memory/semantic/semanticSchema';
import { decodeVector, encodeVectors, VECTOR_ENCODING } from '../src/core/memory/semantic/vectorCodec';
import type { Operation } from '../src/core/store/journal';
import { queryScalar } from '../src/core/store/sqlite';
import { STORE_FILES } from '../src/core/store/storeOpen';
import { nowMs } from './stats';
import type { Rng } from './rng';

/**
 * Vectors for the context section's store, so get_context ranks by meaning as it does on a
 * real store. Embedding all 120k memories with the bundled model would take most of an hour on
 * this machine, so a sample spread over the store's memories is embedded for real (through the
 * product's worker, codec, blob store and journal: that is the throughput and the bytes the
 * bench reports), and every other memory gets a vector mixed from two of the sample's plus
 * noise, stored through the same applier. Ranking's cost does not depend on what the vectors
 * say, only on how many there are and how they spread, which the mix keeps like the model's.
 */

export interface VectorFigures {
  sample: number;
  /** Wall time of the sample's embedding, batches of the product's size. */
  embedMs: number;
  sampleChars: number;
  /** What the sample added to the store: blob files on disk, journal lines, database pages. */
  blobBytes: number;
  journalBytes: number;
  dbBytes: number;
  /** Every memory that now has a vector (sample + mixed). */
  total: number;
  /** Bytes of the database before any vector was added, for scale. */
  storeDbBytes: number;
  mixMs: number;
  /** Whether the bundled model's products ran as wasm SIMD (denseKernel.ts). */
  simd: boolean | undefined;
}

const MIX_BATCH = 1_000;

export async function addBenchVectors(s: Services, wasm: string, sampleSize: number, rng: Rng): Promise<VectorFigures> {
  const db = s.store.db;
  const model = s.semantic.model;
  if (model !== LOCAL_MODEL) throw new Error(`the context section ranks the bundled model's vectors; semantic recall here is ${model ?? 'off'}`);
  const todo = missing(db, 'memory', model, Number.MAX_SAFE_INTEGER);
  const stride = Math.max(1, Math.floor(todo.length / sampleSize));
  const sample = todo.filter((_, i) => i % stride === 0).slice(0, sampleSize);
  const dbBytes = () => Number(queryScalar(db, 'PRAGMA page_count')) * Number(queryScalar(db, 'PRAGMA page_size'));
  const home = s.store.home;
  const blobDir = path.join(home, STORE_FILES.blobs);
  const journal = path.join(home, STORE_FILES.journal);
  const before = { blobs: dirBytes(blobDir), journal: fs.statSync(journal).size, db: dbBytes() };

  const embedder = new LocalEmbedder(bundledModel(path.dirname(wasm)));
  let embedMs: number;
  let simd: boolean | undefined;
  try {
    await embedder.embed(['load the model before timing'], 120_000);
    const t0 = nowMs();
    for (let i = 0; i < sample.length; i += embedder.indexBatch) {
      const batch = sample.slice(i, i + embedder.indexBatch);
      const vectors = await embedder.embed(batch.map((t) => t.text), 120_000);
      await store(s, model, batch, encodeVectors(vectors, vectors[0]?.length ?? 0), vectors[0]?.length ?? 0, true);
    }
    embedMs = nowMs() - t0;
    simd = embedder.simd;
  } finally {
    embedder.close();
  }
  const after = { blobs: dirBytes(blobDir), journal: fs.statSync(journal).size, db: dbBytes() };

  // The rest: each a mix of two sampled vectors and noise, in blobs of MIX_BATCH, applied in one transaction.
  const t1 = nowMs();
  const sampled = new Set(sample.map((t) => t.key));
  const rest = todo.filter((t) => !sampled.has(t.key));
  const real = sampledVectors(s, model);
  const dims = real[0]?.length ?? 0;
  // A savepoint, not BEGIN: the store may hold its own batch transaction open after the journaled lines.
  db.exec('SAVEPOINT bench_vectors');
  try {
    for (let i = 0; i < rest.length; i += MIX_BATCH) {
      const batch = rest.slice(i, i + MIX_BATCH);
      const vectors = batch.map(() => {
        const a = real[rng.int(0, real.length - 1)] as Float32Array;
        const b = real[rng.int(0, real.length - 1)] as Float32Array;
        return Float32Array.from({ length: dims }, (_, d) => (a[d] as number) + 0.5 * (b[d] as number) + 0.02 * rng.normal());
      });
      await store(s, model, batch, encodeVectors(vectors, dims), dims, false);
    }
    db.exec('RELEASE bench_vectors');
  } catch (err) {
    db.exec('ROLLBACK TO bench_vectors');
    db.exec('RELEASE bench_vectors');
    throw err;
  }
  return {
    sample: sample.length,
    embedMs,
    sampleChars: sample.reduce((n, t) => n + Math.min(t.text.length, 1200), 0),
    blobBytes: after.blobs - before.blobs,
    journalBytes: after.journal - before.journal,
    dbBytes: after.db - before.db,
    total: sample.length + rest.length,
    storeDbBytes: before.db,
    mixMs: nowMs() - t1,
    simd,
  };
}

/** One batch's vectors as the semantic service stores them: a blob and a `memory.embeddings.stored` line (journaled), or the line applied directly (`journaled` false). */
async function store(s: Services, model: string, batch: readonly Todo[], blob: Uint8Array, dims: number, journaled: boolean): Promise<void> {
  const op: EmbeddingsStored = {
    op: 'memory.embeddings.stored', at: s.store.now, model, dims, encoding: VECTOR_ENCODING, blob: s.store.blobs.put(blob),
    items: batch.map((t) => ({ key: t.key, textHash: t.hash })),
  };
  if (journaled) await s.store.commit(() => ({ op, result: undefined }), { durable: false });
  else semanticAppliers['memory.embeddings.stored'](s.store.db, op as Operation);
}

/** The real vectors stored so far, decoded back to floats (their scale does not matter: the mix is normalised when stored). */
function sampledVectors(s: Services, model: string): Float32Array[] {
  const out: Float32Array[] = [];
  const rows = s.store.db.exec('SELECT blob, idx, dims FROM embeddings WHERE model = ? ORDER BY id', [model])[0]?.values ?? [];
  for (const [blob, idx, dims] of rows) {
    const bytes = s.store.blobs.get(String(blob));
    const v = bytes ? decodeVector(bytes, Number(dims), Number(idx)) : undefined;
    if (v) out.push(Float32Array.from(v.codes, (c) => c * v.factor));
  }
  if (!out.length) throw new Error('no sampled vector was stored');
  return out;
}

function dirBytes(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return n;
}
