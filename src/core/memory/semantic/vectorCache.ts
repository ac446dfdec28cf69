import type { Store } from '../../store/store';
import { queryRows, queryScalar, type Database } from '../../store/sqlite';
import type { Corpus } from './semanticSchema';
import { decodeVector, unit } from './vectorCodec';

/** One model's vectors of one corpus, back to back, one slot per key. */
interface Loaded {
  db: Database;
  /** The store version this reflects (`Store.version`): unchanged means nothing to read. */
  version: number;
  /** The highest embeddings row id read: every later row is new. */
  maxId: number;
  /** `embeddings_gone` when loaded: a change means some key lost its vector. */
  gone: number;
  dims: number;
  keys: string[];
  slot: Map<string, number>;
  codes: Int8Array;
  factors: Float32Array;
}

export interface Ranked {
  key: string;
  similarity: number;
}

/**
 * The kept vectors in memory, read from the blobs once and then only as they change: rows
 * past the highest id seen are added (a key embedded again overwrites its slot), and a key
 * that lost its vector, the only change ids do not show, makes the next use read everything
 * again. A new database object (a rebuild, a compaction's swap) also reads everything.
 */
export class VectorCache {
  private loaded = new Map<string, Loaded>();

  constructor(private readonly store: Store) {}

  /** How many keys of `corpus` have a vector of `model`. */
  size(model: string, corpus: Corpus): number {
    return this.sync(model, corpus)?.keys.length ?? 0;
  }

  /** The `limit` keys most similar to `query` (cosine, best first; ties by key). */
  top(model: string, corpus: Corpus, query: Float32Array, limit: number): Ranked[] {
    const m = this.sync(model, corpus);
    if (!m || m.dims !== query.length || limit <= 0) return [];
    const q = unit(query);
    const dims = m.dims;
    const n = m.keys.length;
    const codes = m.codes;
    const factors = m.factors;
    // Bounded selection: the best `limit` so far in ascending order, so the worst is at 0.
    const bestIdx: number[] = [];
    const bestSim: number[] = [];
    for (let i = 0, base = 0; i < n; i++, base += dims) {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += (codes[base + d] as number) * (q[d] as number);
      const sim = dot * (factors[i] as number);
      if (bestIdx.length === limit && sim <= (bestSim[0] as number)) continue;
      let at = 0;
      while (at < bestSim.length && (bestSim[at] as number) < sim) at++;
      bestSim.splice(at, 0, sim);
      bestIdx.splice(at, 0, i);
      if (bestIdx.length > limit) {
        bestSim.shift();
        bestIdx.shift();
      }
    }
    const out: Ranked[] = [];
    for (let j = bestIdx.length - 1; j >= 0; j--) out.push({ key: m.keys[bestIdx[j] as number] as string, similarity: bestSim[j] as number });
    return out.sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1));
  }

  private sync(model: string, corpus: Corpus): Loaded | undefined {
    const db = this.store.db;
    const version = this.store.version;
    const name = `${model}\u0000${corpus}`;
    const had = this.loaded.get(name);
    if (had && had.db === db && had.version === version) return had;
    const gone = Number(queryScalar(db, 'SELECT n FROM embeddings_gone') ?? 0);
    const m = had && had.db === db && had.gone === gone ? had : fresh(db, gone);
    m.version = version;
    const rows = queryRows(db, 'SELECT id, key, blob, idx, dims FROM embeddings WHERE model = ? AND corpus = ? AND id > ? ORDER BY id', [model, corpus, m.maxId]);
    const blobs = new Map<string, Uint8Array | undefined>();
    for (const r of rows) {
      m.maxId = Math.max(m.maxId, Number(r.id));
      const dims = Number(r.dims);
      if (!m.dims) m.dims = dims;
      if (dims !== m.dims) continue; // a model whose size changed: only the first size is ranked
      const hash = String(r.blob);
      if (!blobs.has(hash)) blobs.set(hash, this.store.blobs.get(hash) ?? undefined);
      const blob = blobs.get(hash);
      const v = blob ? decodeVector(blob, dims, Number(r.idx)) : undefined;
      if (!v) continue;
      const key = String(r.key);
      let at = m.slot.get(key);
      if (at === undefined) {
        at = m.keys.length;
        m.keys.push(key);
        m.slot.set(key, at);
        grow(m, m.keys.length);
      }
      m.codes.set(v.codes, at * dims);
      m.factors[at] = v.factor;
    }
    this.loaded.set(name, m);
    return m;
  }
}

function fresh(db: Database, gone: number): Loaded {
  return { db, version: -1, maxId: 0, gone, dims: 0, keys: [], slot: new Map(), codes: new Int8Array(0), factors: new Float32Array(0) };
}

/** Room for `count` vectors, doubling so that adding one at a time stays linear. */
function grow(m: Loaded, count: number): void {
  if (m.factors.length >= count) return;
  const cap = Math.max(1024, m.factors.length * 2, count);
  const codes = new Int8Array(cap * m.dims);
  codes.set(m.codes);
  const factors = new Float32Array(cap);
  factors.set(m.factors);
  m.codes = codes;
  m.factors = factors;
}
