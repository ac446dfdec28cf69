import type { Store } from '../../store/store';
import { queryRows, queryScalar, type Database } from '../../store/sqlite';
import type { Corpus } from './semanticSchema';
import { SignTable } from './signTable';
import { bytesPerVector, unit } from './vectorCodec';

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
  /** What `keys` and `slot` hold, estimated (heldBytes). */
  keyBytes: number;
  slot: Map<string, number>;
  codes: Int8Array;
  factors: Float32Array;
  /** Each vector's signs, one bit a dimension: the coarse pass compares these (made when `dims` is known). */
  signs: SignTable | undefined;
}

/**
 * Past this many vectors a ranking first compares signs (Hamming distance, 16 words for 512 dimensions
 * vector), then scores only the nearest `RESCORE` by their bytes: the full byte scan of 70,000
 * vectors takes ~100 ms here, the sign pass a few.
 */
export const COARSE_FROM = 4_000;
export const RESCORE = 1_000;

/** When a ranking takes the sign pass, and how many it rescores (tests make both small). */
export interface RankingOptions {
  coarseFrom: number;
  rescore: number;
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

  constructor(
    private readonly store: Store,
    private readonly ranking: RankingOptions = { coarseFrom: COARSE_FROM, rescore: RESCORE },
  ) {}

  /** How many keys of `corpus` have a vector of `model`. */
  size(model: string, corpus: Corpus): number {
    return this.sync(model, corpus)?.keys.length ?? 0;
  }

  /**
   * Keys in order of similarity to `query` (cosine, best first; ties by key): every vector when
   * there are few, else the nearest by sign, at least `max(rescore, 4 × want)` of them, each
   * scored exactly by its bytes. The caller walks the list until it has what it needs, so a
   * filter that drops many (superseded facts, another scope) costs no second ranking.
   */
  ordered(model: string, corpus: Corpus, query: Float32Array, want: number): Ranked[] {
    const m = this.sync(model, corpus);
    if (!m || m.dims !== query.length || want <= 0) return [];
    const q = unit(query);
    const n = m.keys.length;
    const pool = Math.max(this.ranking.rescore, want * 4);
    const candidates = n >= this.ranking.coarseFrom && pool < n ? nearestBySign(m, q, pool) : everyIndex(n);
    const sims = new Float64Array(candidates.length);
    for (let j = 0; j < candidates.length; j++) sims[j] = score(m, q, candidates[j] as number);
    const keys = m.keys;
    const order = Array.from(candidates.keys());
    order.sort((a, b) => (sims[b] as number) - (sims[a] as number) || ((keys[candidates[a] as number] as string) < (keys[candidates[b] as number] as string) ? -1 : 1));
    return order.map((j) => ({ key: keys[candidates[j] as number] as string, similarity: sims[j] as number }));
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
    // One row per blob, its keys and positions as JSON arrays: reading 70,000 rows one by one
    // costs sql.js seconds, the grouped read a fraction. A key has one row at a time (the
    // applier deletes the older ones), so the order of rows does not matter within a read.
    const groups = queryRows(
      db,
      `SELECT blob, dims, max(id) AS max_id, json_group_array(key) AS keys, json_group_array(idx) AS idxs
         FROM embeddings WHERE model = ? AND corpus = ? AND id > ? GROUP BY blob, dims ORDER BY max(id)`,
      [model, corpus, m.maxId],
    );
    for (const g of groups) {
      m.maxId = Math.max(m.maxId, Number(g.max_id));
      const dims = Number(g.dims);
      if (!m.dims) m.dims = dims;
      if (dims !== m.dims) continue; // a model whose size changed: only the first size is ranked
      const blob = this.store.blobs.get(String(g.blob));
      if (!blob) continue;
      const keys = JSON.parse(String(g.keys)) as string[];
      const idxs = JSON.parse(String(g.idxs)) as number[];
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      const codes = new Int8Array(blob.buffer, blob.byteOffset, blob.byteLength);
      const per = bytesPerVector(dims);
      keys.forEach((key, j) => {
        const from = (idxs[j] as number) * per;
        if (from + per > blob.byteLength) return;
        let at = m.slot.get(key);
        if (at === undefined) {
          at = m.keys.length;
          m.keys.push(key);
          m.keyBytes += KEY_OVERHEAD + 2 * key.length;
          m.slot.set(key, at);
          grow(m, m.keys.length);
        }
        const own = codes.subarray(from + 4, from + per);
        m.codes.set(own, at * dims);
        m.factors[at] = view.getFloat32(from, true);
        m.signs?.set(at, own);
      });
    }
    this.loaded.set(name, m);
    this.store.reserveMemory('vectors', this.heldBytes());
    return m;
  }

  /**
   * What the kept vectors hold: their arrays as allocated (capacity doubles), and for each key
   * its string, its array slot and its map entry (an estimate of V8's sizes: KEY_OVERHEAD).
   */
  heldBytes(): number {
    let bytes = 0;
    for (const m of this.loaded.values()) {
      bytes += m.codes.byteLength + m.factors.byteLength + (m.signs?.byteLength ?? 0) + m.keyBytes;
    }
    return bytes;
  }
}

/** Per kept key beside its characters (2 bytes each): the string's header, its array slot, its map entry. */
const KEY_OVERHEAD = 64;

function fresh(db: Database, gone: number): Loaded {
  return { db, version: -1, maxId: 0, gone, dims: 0, keys: [], keyBytes: 0, slot: new Map(), codes: new Int8Array(0), factors: new Float32Array(0), signs: undefined };
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
  m.signs ??= new SignTable(m.dims);
  m.signs.reserve(cap);
}

/** The cosine of unit `q` with vector `i` as stored. */
function score(m: Loaded, q: Float32Array, i: number): number {
  const dims = m.dims;
  const codes = m.codes;
  let dot = 0;
  for (let d = 0, base = i * dims; d < dims; d++) dot += (codes[base + d] as number) * (q[d] as number);
  return dot * (m.factors[i] as number);
}

/** The `pool` vectors whose signs differ from the query's in the fewest dimensions (a histogram over distances, so linear). */
function nearestBySign(m: Loaded, q: Float32Array, pool: number): Uint32Array {
  const n = m.keys.length;
  const dist = (m.signs as SignTable).distances(q, n);
  const histogram = new Uint32Array(m.dims + 1);
  for (let i = 0; i < n; i++) histogram[dist[i] as number] = (histogram[dist[i] as number] as number) + 1;
  let cut = 0;
  for (let seen = 0; cut <= m.dims && seen + (histogram[cut] as number) < pool; cut++) seen += histogram[cut] as number;
  let count = 0;
  for (let c = 0; c <= cut && c <= m.dims; c++) count += histogram[c] as number;
  const out = new Uint32Array(count);
  for (let i = 0, j = 0; i < n; i++) if ((dist[i] as number) <= cut) out[j++] = i;
  return out;
}

function everyIndex(n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
