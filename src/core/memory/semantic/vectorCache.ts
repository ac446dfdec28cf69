import type { Store } from '../../store/store';
import { queryRows, queryScalar } from '../../store/sqlite';

interface Loaded {
  version: string;
  keys: string[];
  /** Unit-length vectors back to back, so ranking is one dot product per memory. */
  matrix: Float32Array;
  dims: number;
}

/**
 * The kept vectors of one model in one flat, normalised matrix, rebuilt only when the
 * embeddings table changed. Blobs are read from disk once per rebuild; at 20k memories of 768
 * dimensions the matrix is 60 MB and a full ranking a few milliseconds.
 */
export class VectorCache {
  private loaded = new Map<string, Loaded>();

  constructor(private readonly store: Store) {}

  rank(model: string, query: Float32Array): { key: string; similarity: number }[] {
    const m = this.load(model);
    if (!m || m.dims !== query.length) return [];
    const q = normalised(query);
    const out = new Array<{ key: string; similarity: number }>(m.keys.length);
    for (let i = 0, base = 0; i < m.keys.length; i++, base += m.dims) {
      let dot = 0;
      for (let d = 0; d < m.dims; d++) dot += (m.matrix[base + d] as number) * (q[d] as number);
      out[i] = { key: m.keys[i] as string, similarity: dot };
    }
    return out.sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1));
  }

  private load(model: string): Loaded | undefined {
    const db = this.store.db;
    const version = String(queryScalar(db, "SELECT count(*) || ':' || coalesce(max(rowid), 0) FROM embeddings WHERE model = ?", [model]) ?? '');
    const cached = this.loaded.get(model);
    if (cached?.version === version) return cached;
    const rows = queryRows(db, 'SELECT key, blob, idx, dims FROM embeddings WHERE model = ? ORDER BY key', [model]);
    const dims = Number(rows[0]?.dims ?? 0);
    const blobs = new Map<string, Float32Array | undefined>();
    const keys: string[] = [];
    const matrix = new Float32Array(rows.length * dims);
    for (const r of rows) {
      if (Number(r.dims) !== dims) continue; // a model whose size changed: only the first size is ranked
      const hash = String(r.blob);
      if (!blobs.has(hash)) {
        const bytes = this.store.blobs.get(hash);
        blobs.set(hash, bytes ? new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) : undefined);
      }
      const all = blobs.get(hash);
      const at = Number(r.idx) * dims;
      if (!all || at + dims > all.length) continue;
      matrix.set(normalised(all.subarray(at, at + dims)), keys.length * dims);
      keys.push(String(r.key));
    }
    const loaded = { version, keys, matrix: matrix.subarray(0, keys.length * dims), dims };
    this.loaded.set(model, loaded);
    return loaded;
  }
}

function normalised(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  const norm = Math.sqrt(sum) || 1;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) / norm;
  return out;
}
