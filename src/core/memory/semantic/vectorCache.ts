import type { Store } from '../../store/store';
import { queryRows, queryScalar, type Database } from '../../store/sqlite';
import type { Corpus } from './semanticSchema';
import { KeySlots } from './keySlots';
import { SignTable } from './signTable';
import { bytesPerVector, unit } from './vectorCodec';
import { VectorRecords } from './vectorRecords';
import { bestByTwoBits, byteSums, magnitudeBits, type TwoBits } from './twoBitPass';
import { supersededFacts, supersededSince } from './semanticCorpora';

/**
 * One model's vectors of one corpus. Memory holds which slot holds which key, the signs the
 * first pass of a ranking reads for every vector (64 bytes for 512 dimensions) and the magnitude
 * bits the second pass reads for its candidates (64 more), up to `residentSigns` vectors; past
 * that both are read from a scratch file, the signs a block at a time. Each vector's exact bytes
 * and its key are a record in another scratch file (vectorRecords.ts), read for the candidates
 * the last pass rescores.
 */
interface Loaded {
  db: Database;
  /** The store version this reflects (`Store.version`): unchanged means nothing to read. */
  version: number;
  /** The highest embeddings row id read: every later row is new. */
  maxId: number;
  /** `embeddings_gone` when loaded: a change means some key lost its vector. */
  gone: number;
  dims: number;
  slots: KeySlots;
  records: VectorRecords | undefined;
  /** Keys too long for a record's room (RecordLayout), by slot. */
  longKeys: Map<number, string>;
  longKeyBytes: number;
  /**
   * Each vector's signs, one bit a dimension: the coarse pass compares these (made when `dims`
   * is known). Once paged, a table of SIGN_BLOCK slots that the signs of each block of `bitFile` are loaded into.
   */
  signs: SignTable | undefined;
  /** Each vector's magnitude bits (twoBitPass.ts), `stride` bytes by slot, while not paged. */
  magnitudes: Uint8Array;
  paged: boolean;
  /** Every vector's two bits a dimension, by slot: its signs as the table packs them, then its magnitude bits. */
  bitFile: VectorRecords | undefined;
  /** Records and bits made but not yet written: slots `pendingFrom` on, back to back. */
  pending: Uint8Array[];
  pendingBits: Uint8Array[];
  pendingFrom: number;
  /**
   * Memory only: 1 by slot where the key is a superseded fact, so a ranking of current memory
   * leaves those out before its passes instead of resolving them after; kept exact by checking
   * each new key and each fact `facts_superseded_log` names past `supersededSeen`.
   */
  historical: Uint8Array;
  historicalCount: number;
  supersededSeen: number;
}

/**
 * Past this many vectors a ranking first compares signs, then scores only the nearest by their
 * bytes: the full byte scan of 70,000 vectors takes ~100 ms here, the passes by sign a few. The
 * first pass (Hamming distance over the signs, 16 words for 512 dimensions) keeps WIDEN times as
 * many as are rescored; the second (two bits a dimension) picks those. At least `RESCORE` are
 * rescored, and as many as the caller wants. Each rescored vector is one read of its record, the
 * largest part of a ranking's time. The bench's "ranked vs an exact scan" line is the measure
 * these were set by (docs/performance.md).
 */
export const COARSE_FROM = 4_000;
export const RESCORE = 500;
const WIDEN = 9;

/** Signs a corpus keeps in memory (16 MB at 512 dimensions); past this many they are paged from their file. */
export const RESIDENT_SIGNS = 262_144;
/** Slots of signs the paged pass reads and compares at a time (4 MB at 512 dimensions). */
const SIGN_BLOCK = 65_536;

/** When a ranking takes the sign pass, how many it rescores, and how many signs stay in memory (tests make them small). */
export interface RankingOptions {
  coarseFrom: number;
  rescore: number;
  residentSigns?: number;
}

export interface Ranked {
  key: string;
  similarity: number;
}

/**
 * The kept vectors, read from the blobs once and then only as they change: rows past the
 * highest id seen are added (a key embedded again overwrites its slot), and a key that lost its
 * vector, the only change ids do not show, makes the next use read everything again. A new
 * database object (a rebuild, a compaction's swap) also reads everything.
 */
export class VectorCache {
  private loaded = new Map<string, Loaded>();

  constructor(
    private readonly store: Store,
    private readonly ranking: RankingOptions = { coarseFrom: COARSE_FROM, rescore: RESCORE },
  ) {
    store.onClose(() => this.close());
  }

  /** Slots of signs a paged pass compares at a time: never more than a corpus keeps in memory. */
  private get signBlock(): number {
    return Math.min(SIGN_BLOCK, this.ranking.residentSigns ?? RESIDENT_SIGNS);
  }

  /** How many keys of `corpus` have a vector of `model`. */
  size(model: string, corpus: Corpus): number {
    return this.sync(model, corpus)?.slots.count ?? 0;
  }

  /**
   * Keys in order of similarity to `query` (cosine, best first; ties by key): every vector when
   * there are few, else the nearest by sign, at least `max(rescore, 3 × want)` of them, each
   * scored exactly by its bytes. `current` leaves superseded facts out of every pass. The caller
   * walks the list until it has what it needs, so a filter that drops many (another scope) costs
   * no second ranking.
   */
  ordered(model: string, corpus: Corpus, query: Float32Array, want: number, current = false): Ranked[] {
    const m = this.sync(model, corpus);
    if (!m || !m.records || m.dims !== query.length || want <= 0) return [];
    const q = unit(query);
    const n = m.slots.count;
    const pool = Math.max(this.ranking.rescore, want);
    const skip = current && m.historicalCount > 0 ? m.historical : undefined;
    const candidates = n >= this.ranking.coarseFrom && pool < n ? nearestBySigns(m, q, pool, this.signBlock, skip) : everyIndex(n, skip);
    const layout = layoutOf(m.dims);
    const bytes = m.records.read(candidates);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const codes = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const sims = new Float64Array(candidates.length);
    const keys: string[] = new Array<string>(candidates.length);
    for (let j = 0; j < candidates.length; j++) {
      const at = j * layout.bytes;
      sims[j] = score(codes, at + 4, m.dims, q) * view.getFloat32(at, true);
      keys[j] = keyOf(m, bytes, at, layout, candidates[j] as number);
    }
    const order = Array.from(candidates.keys());
    order.sort((a, b) => (sims[b] as number) - (sims[a] as number) || ((keys[a] as string) < (keys[b] as string) ? -1 : 1));
    return order.map((j) => ({ key: keys[j] as string, similarity: sims[j] as number }));
  }

  /** Removes the scratch files: the cache is not used again. */
  close(): void {
    for (const m of this.loaded.values()) {
      m.records?.close();
      m.bitFile?.close();
    }
    this.loaded.clear();
    this.store.reserveMemory('vectors', 0);
  }

  private sync(model: string, corpus: Corpus): Loaded | undefined {
    const db = this.store.db;
    const version = this.store.version;
    const name = `${model}\u0000${corpus}`;
    const had = this.loaded.get(name);
    if (had && had.db === db && had.version === version) return had;
    const gone = Number(queryScalar(db, 'SELECT n FROM embeddings_gone') ?? 0);
    let m: Loaded;
    if (had && had.db === db && had.gone === gone) m = had;
    else {
      had?.records?.reset();
      had?.bitFile?.reset();
      m = fresh(db, gone, had?.records, had?.bitFile);
    }
    m.version = version;
    // One row per blob, its keys and positions as JSON arrays: reading 70,000 rows one by one
    // costs sql.js seconds, the grouped read a fraction. A key has one row at a time (the
    // applier deletes the older ones), so the order of rows does not matter within a read.
    const addedFacts = new Map<string, number>();
    const groups = queryRows(
      db,
      `SELECT blob, dims, max(id) AS max_id, json_group_array(key) AS keys, json_group_array(idx) AS idxs
         FROM embeddings WHERE model = ? AND corpus = ? AND id > ? GROUP BY blob, dims ORDER BY max(id)`,
      [model, corpus, m.maxId],
    );
    for (const g of groups) {
      m.maxId = Math.max(m.maxId, Number(g.max_id));
      const dims = Number(g.dims);
      if (!m.dims) {
        m.dims = dims;
        m.signs = new SignTable(dims);
        if (m.records && m.records.recordBytes !== layoutOf(dims).bytes) {
          m.records.close();
          m.records = undefined;
        }
        if (m.bitFile && m.bitFile.recordBytes !== 2 * m.signs.stride) {
          m.bitFile.close();
          m.bitFile = undefined;
        }
        m.records ??= new VectorRecords(layoutOf(dims).bytes, [this.store.home], `vectors.tmp-${process.pid}-${++scratchFiles}${corpus}`);
        m.bitFile ??= new VectorRecords(2 * m.signs.stride, [this.store.home], `vectors.tmp-${process.pid}-${++scratchFiles}${corpus}bits`);
      }
      if (dims !== m.dims) continue; // a model whose size changed: only the first size is ranked
      const blob = this.store.blobs.get(String(g.blob));
      if (!blob) continue;
      const keys = JSON.parse(String(g.keys)) as string[];
      const idxs = JSON.parse(String(g.idxs)) as number[];
      const layout = layoutOf(dims);
      const per = bytesPerVector(dims);
      const codes = new Int8Array(blob.buffer, blob.byteOffset, blob.byteLength);
      keys.forEach((key, j) => {
        const from = (idxs[j] as number) * per;
        if (from + per > blob.byteLength) return;
        let at = m.slots.get(key);
        if (at === undefined) {
          at = m.slots.add(key);
          if (corpus === 'memory' && key.startsWith('fact:')) addedFacts.set(key, at);
          // Every earlier vector's bits are queued for their file already: from here the table holds one block of signs at a time.
          if (!m.paged && m.slots.count > (this.ranking.residentSigns ?? RESIDENT_SIGNS)) {
            m.paged = true;
            m.signs = new SignTable(dims);
            m.signs.reserve(this.signBlock);
            m.magnitudes = new Uint8Array(0);
          }
        }
        const table = m.signs as SignTable;
        // A paged table is a block's scratch: the vector's signs are packed in its first slot.
        const signAt = m.paged ? 0 : at;
        if (!m.paged) table.reserve(m.slots.count);
        const vector = codes.subarray(from + 4, from + per);
        table.set(signAt, vector);
        const large = magnitudeBits(vector, table.stride);
        if (!m.paged) m.magnitudes = placed(m.magnitudes, at * table.stride, large);
        const record = new Uint8Array(layout.bytes);
        record.set(blob.subarray(from, from + per), 0);
        const utf8 = Buffer.from(key, 'utf8');
        if (utf8.byteLength <= layout.keyRoom) {
          record[layout.keyAt] = utf8.byteLength;
          record.set(utf8, layout.keyAt + 1);
          if (m.longKeys.delete(at)) m.longKeyBytes -= KEY_OVERHEAD + 2 * key.length;
        } else {
          record[layout.keyAt] = LONG_KEY;
          if (!m.longKeys.has(at)) m.longKeyBytes += KEY_OVERHEAD + 2 * key.length;
          m.longKeys.set(at, key);
        }
        const bits = new Uint8Array(2 * table.stride);
        bits.set(table.packed(signAt), 0);
        bits.set(large, table.stride);
        put(m, at, record, bits);
      });
    }
    flush(m);
    if (corpus === 'memory') markSuperseded(m, db, addedFacts);
    this.loaded.set(name, m);
    this.store.reserveMemory('vectors', this.heldBytes());
    return m;
  }

  /**
   * What the kept vectors hold in this process: the signs' wasm memory, the magnitude bits, the key-to-slot arrays
   * (capacity doubles), the keys too long for a record (an estimate of V8's sizes:
   * KEY_OVERHEAD), and the records themselves only where no scratch file could be written.
   */
  heldBytes(): number {
    let bytes = 0;
    for (const m of this.loaded.values()) {
      bytes += (m.signs?.byteLength ?? 0) + m.magnitudes.byteLength + m.historical.byteLength + m.slots.byteLength + m.longKeyBytes + (m.records?.heldBytes ?? 0) + (m.bitFile?.heldBytes ?? 0);
    }
    return bytes;
  }
}

/** Scratch files made so far by this process: each cache's must have a name of its own. */
let scratchFiles = 0;

/** Per key kept in memory beside its characters (2 bytes each): the string's header and its map entry. */
const KEY_OVERHEAD = 64;
/** A record's key length that says the key is too long for it and kept in memory. */
const LONG_KEY = 255;
/** Bytes a record keeps for its key (UTF-8); `entry:<path>#<hash>` and `chunk:<file>:<seq>` fit unless the path is long. */
const KEY_ROOM = 123;
/** Records gathered before one write: a first load writes tens of thousands of records. */
const WRITE_RECORDS = 512;

/** A record: the vector as stored (factor, codes: vectorCodec.ts), the key's length in bytes, the key. */
interface RecordLayout {
  bytes: number;
  keyAt: number;
  keyRoom: number;
}

function layoutOf(dims: number): RecordLayout {
  const keyAt = bytesPerVector(dims);
  return { bytes: keyAt + 1 + KEY_ROOM, keyAt, keyRoom: KEY_ROOM };
}

function fresh(db: Database, gone: number, records: VectorRecords | undefined, bitFile: VectorRecords | undefined): Loaded {
  const m: Loaded = {
    db, version: -1, maxId: 0, gone, dims: 0,
    slots: new KeySlots((slot) => keyAtSlot(m, slot)),
    records, longKeys: new Map(), longKeyBytes: 0, signs: undefined, magnitudes: new Uint8Array(0), paged: false, bitFile,
    pending: [], pendingBits: [], pendingFrom: 0, historical: new Uint8Array(0), historicalCount: 0, supersededSeen: 0,
  };
  return m;
}

/** `bytes` written at `at` into `into`, grown (capacity doubling) when it is too short. */
function placed(into: Uint8Array, at: number, bytes: Uint8Array): Uint8Array {
  let out = into;
  if (at + bytes.byteLength > out.byteLength) {
    out = new Uint8Array(Math.max(at + bytes.byteLength, 2 * into.byteLength, 1 << 16));
    out.set(into);
  }
  out.set(bytes, at);
  return out;
}

/** Queues slot `at`'s record and bits; consecutive new slots go out in one write. */
function put(m: Loaded, at: number, record: Uint8Array, bits: Uint8Array): void {
  if (m.pending.length && (at !== m.pendingFrom + m.pending.length || m.pending.length >= WRITE_RECORDS)) flush(m);
  if (!m.pending.length) m.pendingFrom = at;
  m.pending.push(record);
  m.pendingBits.push(bits);
}

function flush(m: Loaded): void {
  if (!m.pending.length || !m.records || !m.bitFile) return;
  m.records.write(m.pendingFrom, Buffer.concat(m.pending));
  m.bitFile.write(m.pendingFrom, Buffer.concat(m.pendingBits));
  m.pending = [];
  m.pendingBits = [];
}

/** The key in slot `at`, read back from its record (the key-to-slot arrays check a hash match with it). */
function keyAtSlot(m: Loaded, at: number): string {
  flush(m);
  const layout = layoutOf(m.dims);
  const bytes = (m.records as VectorRecords).read(Uint32Array.of(at));
  return keyOf(m, bytes, 0, layout, at);
}

function keyOf(m: Loaded, bytes: Uint8Array, at: number, layout: RecordLayout, slot: number): string {
  const length = bytes[at + layout.keyAt] as number;
  if (length === LONG_KEY) return m.longKeys.get(slot) as string;
  const from = at + layout.keyAt + 1;
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, length).toString('utf8');
}

/** The dot product of unit `q` with the `dims` codes from `at`. */
function score(codes: Int8Array, at: number, dims: number, q: Float32Array): number {
  let dot = 0;
  for (let d = 0; d < dims; d++) dot += (codes[at + d] as number) * (q[d] as number);
  return dot;
}

/** The `pool` vectors nearest by their signs, but those `skip` marks: the nearest WIDEN × `pool` by distance, then the best `pool` of those at two bits a dimension (twoBitPass.ts). */
function nearestBySigns(m: Loaded, q: Float32Array, pool: number, block: number, skip: Uint8Array | undefined): Uint32Array {
  const wide = nearestByHamming(m, q, pool * WIDEN, block, skip);
  if (wide.length <= pool) return wide;
  const stride = (m.signs as SignTable).stride;
  let bits: TwoBits;
  if (m.paged) {
    const read = (m.bitFile as VectorRecords).read(wide);
    bits = { signs: read, magnitudes: read.subarray(stride), step: 2 * stride, byPosition: true };
  } else bits = { signs: (m.signs as SignTable).all, magnitudes: m.magnitudes, step: stride, byPosition: false };
  return bestByTwoBits(byteSums(q, stride), stride, wide, pool, bits);
}

/** The `pool` vectors whose signs differ from the query's in the fewest dimensions (a histogram over distances, so linear). */
function nearestByHamming(m: Loaded, q: Float32Array, pool: number, block: number, skip: Uint8Array | undefined): Uint32Array {
  const n = m.slots.count;
  const dist = m.paged ? pagedDistances(m, q, n, block) : (m.signs as SignTable).distances(q, n);
  // A skipped slot is put past every distance, where neither the histogram nor the cut sees it.
  if (skip) for (let i = 0; i < n; i++) if (skip[i]) dist[i] = m.dims + 1;
  const histogram = new Uint32Array(m.dims + 2);
  for (let i = 0; i < n; i++) histogram[dist[i] as number] = (histogram[dist[i] as number] as number) + 1;
  let cut = 0;
  for (let seen = 0; cut <= m.dims && seen + (histogram[cut] as number) < pool; cut++) seen += histogram[cut] as number;
  let count = 0;
  cut = Math.min(cut, m.dims);
  for (let c = 0; c <= cut; c++) count += histogram[c] as number;
  const out = new Uint32Array(count);
  for (let i = 0, j = 0; i < n; i++) if ((dist[i] as number) <= cut) out[j++] = i;
  return out;
}

/** Every slot below n, but those `skip` marks. */
function everyIndex(n: number, skip?: Uint8Array): Uint32Array {
  const out = new Uint32Array(n);
  let j = 0;
  for (let i = 0; i < n; i++) if (!skip?.[i]) out[j++] = i;
  return j === n ? out : out.slice(0, j);
}

/**
 * Marks the slots of superseded facts: of the facts just given a slot, and of the facts whose
 * state changed since the log was last read (a fact without a slot yet is checked when it gets one).
 */
function markSuperseded(m: Loaded, db: Database, added: Map<string, number>): void {
  const changed = supersededSince(db, m.supersededSeen);
  m.supersededSeen = changed.last;
  const slots = new Map(added);
  for (const key of changed.keys) {
    const at = slots.has(key) ? slots.get(key) : m.slots.get(key);
    if (at !== undefined) slots.set(key, at);
  }
  if (!slots.size) return;
  if (m.historical.length < m.slots.count) m.historical = placed(m.historical, m.slots.count - 1, new Uint8Array(1)); // past its old end: nothing marked
  const superseded = supersededFacts(db, [...slots.keys()]);
  for (const [key, at] of slots) {
    const now = superseded.has(key) ? 1 : 0;
    m.historicalCount += now - (m.historical[at] as number);
    m.historical[at] = now;
  }
}

/** The distances of every vector, its signs read from their file and compared a block at a time. */
function pagedDistances(m: Loaded, q: Float32Array, n: number, block: number): Uint16Array {
  const table = m.signs as SignTable;
  const file = m.bitFile as VectorRecords;
  const out = new Uint16Array(n);
  for (let from = 0; from < n; from += block) {
    const count = Math.min(block, n - from);
    table.load(0, file.readRange(from, count), file.recordBytes);
    out.set(table.distances(q, count), from);
  }
  return out;
}
