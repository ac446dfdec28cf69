import { wasmFunction } from './wasmBytes';
/**
 * Every vector's signs (one bit a dimension), kept in a WebAssembly memory so that the first
 * pass of a ranking, the Hamming distance from the query's signs to every vector's, runs as
 * 128-bit SIMD (xor, per-byte popcount, add) instead of a 32-bit loop in JavaScript: over
 * 120,000 vectors of 512 dimensions it is about twice as fast. Where the runtime has no wasm
 * SIMD the same distances are computed by that loop, so the answer never depends on which ran.
 *
 * Layout of the memory: the query's signs at 0, the vectors' signs from SIGNS_AT, one slot of
 * `stride` bytes each, then the distances (one u16 a vector), which are scratch.
 */

/** Room for the query's signs: dimensions up to 8,192. */
const SIGNS_AT = 1024;
const PAGE = 65536;
/** Per-byte counts add up in 8 bits: at most 8 a chunk, so 31 chunks (3,968 dimensions) at most. */
const MAX_CHUNKS = 31;

export class SignTable {
  /** Bytes a vector's signs take: whole 16-byte chunks, the unused bits zero. */
  readonly stride: number;
  private readonly words: number;
  private memory: WebAssembly.Memory;
  private capacity = 0;
  private readonly kernel: ((n: number, chunks: number, from: number, out: number) => void) | undefined;

  constructor(readonly dims: number) {
    this.stride = Math.ceil(dims / 128) * 16;
    this.words = this.stride / 4;
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.kernel = this.stride / 16 <= MAX_CHUNKS && this.stride <= SIGNS_AT ? simdKernel(this.memory) : undefined;
  }

  /** Makes room for `count` vectors, keeping those set. */
  reserve(count: number): void {
    if (count <= this.capacity) return;
    const cap = Math.max(1024, this.capacity * 2, count);
    const need = SIGNS_AT + cap * this.stride + cap * 2;
    const pages = Math.ceil(need / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.memory.grow(pages);
    this.capacity = cap;
  }

  /** Vector `at`'s signs from its codes: bit set where the code is positive. */
  set(at: number, codes: Int8Array): void {
    const out = new Uint32Array(this.memory.buffer, SIGNS_AT + at * this.stride, this.words);
    packSigns(codes, out);
  }

  /** A copy of vector `at`'s signs as packed here (`stride` bytes), for `load`. */
  packed(at: number): Uint8Array {
    return new Uint8Array(this.memory.buffer, SIGNS_AT + at * this.stride, this.stride).slice();
  }

  /** Every vector's packed signs, slot `i` at `i × stride`: a view, valid until the table grows. */
  get all(): Uint8Array {
    return new Uint8Array(this.memory.buffer, SIGNS_AT, this.capacity * this.stride);
  }

  /**
   * Vectors' signs as `packed` gives them, into slots `at` on (room made by `reserve`): one a
   * `recordBytes` of `records`, each record starting with them.
   */
  load(at: number, records: Uint8Array, recordBytes = this.stride): void {
    const count = Math.floor(records.byteLength / recordBytes);
    const into = new Uint8Array(this.memory.buffer, SIGNS_AT + at * this.stride, count * this.stride);
    if (recordBytes === this.stride) into.set(records.subarray(0, count * this.stride));
    else for (let i = 0; i < count; i++) into.set(records.subarray(i * recordBytes, i * recordBytes + this.stride), i * this.stride);
  }

  /**
   * The Hamming distance from the signs of `query` to each of the first `n` vectors'. The
   * array is a view of scratch memory, valid until the next call.
   */
  distances(query: Float32Array, n: number): Uint16Array {
    const buffer = this.memory.buffer;
    const q = new Uint32Array(buffer, 0, this.words);
    q.fill(0);
    for (let d = 0; d < this.dims; d++) if ((query[d] as number) > 0) q[d >> 5] = ((q[d >> 5] as number) | (1 << (d & 31))) >>> 0;
    const outAt = SIGNS_AT + this.capacity * this.stride;
    if (n > 0 && this.kernel) this.kernel(n, this.stride / 16, SIGNS_AT, outAt);
    else if (n > 0) distancesInJs(new Uint32Array(buffer, SIGNS_AT, n * this.words), q, this.words, new Uint16Array(buffer, outAt, n));
    return new Uint16Array(buffer, outAt, n);
  }

  /** The wasm memory's size: the signs, the query and the distances' scratch. */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** Which way distances are computed here (the bench prints it). */
  get simd(): boolean {
    return this.kernel !== undefined;
  }
}

function packSigns(codes: Int8Array, out: Uint32Array): void {
  const dims = codes.length;
  out.fill(0);
  for (let w = 0, d = 0; d < dims; w++) {
    let word = 0;
    // (-c) >>> 31 is 1 exactly where c > 0: no branch in a loop run for every dimension of every vector.
    for (let b = 0; b < 32 && d < dims; b++, d++) word |= (-(codes[d] as number) >>> 31) << b;
    out[w] = word >>> 0;
  }
}

function distancesInJs(signs: Uint32Array, q: Uint32Array, words: number, out: Uint16Array): void {
  for (let i = 0, base = 0; i < out.length; i++, base += words) {
    let h = 0;
    for (let j = 0; j < words; j++) {
      let x = ((signs[base + j] as number) ^ (q[j] as number)) >>> 0;
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      h += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    out[i] = h;
  }
}

/**
 * The distance pass as a wasm function `dist(n, chunks, from, out)`, written out as bytes (it is
 * ~100 bytes of code; a toolchain for it would be the larger part): for each of `n` slots of
 * `chunks` × 16 bytes from `from`, xor with the query's chunks at 0, count the bits per byte,
 * add the chunks, widen and sum the lanes, store a u16 at `out`. Undefined where the runtime
 * refuses the module (no SIMD).
 */
function simdKernel(memory: WebAssembly.Memory): ((n: number, chunks: number, from: number, out: number) => void) | undefined {
  const S = 0xfd;
  // Locals: 0 n, 1 chunks, 2 p (a slot's chunk), 3 out, 4 end, 5 q (the query's chunk), 6 c (chunks left), 7 acc (v128).
  const code = [
    ...[0x20, 3, 0x20, 0, 0x41, 1, 0x74, 0x6a, 0x21, 4], // end = out + 2n
    0x02, 0x40, // block
    ...[0x20, 3, 0x20, 4, 0x4f, 0x0d, 0], // n == 0: done
    0x03, 0x40, // loop over slots
    ...[S, 0x0c, ...new Array<number>(16).fill(0), 0x21, 7], // acc = 0
    ...[0x41, 0, 0x21, 5, 0x20, 1, 0x21, 6], // q = 0, c = chunks
    0x03, 0x40, // loop over chunks
    ...[0x20, 7, 0x20, 2, S, 0x00, 4, 0, 0x20, 5, S, 0x00, 4, 0], // acc, load p, load q
    ...[S, 0x51, S, 0x62, S, 0x6e, 0x21, 7], // acc = acc + popcnt(p ^ q), per byte
    ...[0x20, 2, 0x41, 16, 0x6a, 0x21, 2, 0x20, 5, 0x41, 16, 0x6a, 0x21, 5], // p += 16, q += 16
    ...[0x20, 6, 0x41, 1, 0x6b, 0x22, 6, 0x0d, 0], // while --c
    0x0b,
    ...[0x20, 3, 0x20, 7, S, 0x7d, S, 0x7f, 0x22, 7, S, 0x1b, 0], // out; widen bytes to i32 lanes; lane 0
    ...[0x20, 7, S, 0x1b, 1, 0x6a, 0x20, 7, S, 0x1b, 2, 0x6a, 0x20, 7, S, 0x1b, 3, 0x6a], // + lanes 1-3
    ...[0x3b, 1, 0], // i32.store16
    ...[0x20, 3, 0x41, 2, 0x6a, 0x22, 3, 0x20, 4, 0x49, 0x0d, 0], // out += 2; while out < end
    0x0b,
    0x0b,
    0x0b,
  ];
  return wasmFunction<(n: number, chunks: number, from: number, out: number) => void>('dist', 4, [3, 0x7f, 1, 0x7b], code, memory);
}
