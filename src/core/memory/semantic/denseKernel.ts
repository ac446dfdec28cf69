import { leb, wasmFunction } from './wasmBytes';
/**
 * y = x · W + b for the bundled model's layers, as a WebAssembly SIMD function written out as
 * bytes (like signTable.ts's: a toolchain would be the larger part). The model's cost is almost
 * all in these products, and TensorFlow.js spent more on running its 317 graph nodes than on the
 * arithmetic for a short query.
 *
 * Layouts, chosen so that the inner loop reads both operands in order:
 * - W is packed in panels of 8 columns: for each panel, for each input k, the panel's 8 weights.
 * - x is packed in blocks of 4 rows: for each block, for each input k, the 4 rows' values.
 * - y is row-major, and a block's 4 rows are all written (rows past n land in the scratch's padding).
 * A block of 4 rows × a panel of 8 columns is 8 SIMD accumulators, which each weight load feeds 4 times.
 */

/** Rows per block and columns per panel. */
export const ROWS = 4;
export const COLUMNS = 8;

export interface DenseKernel {
  /** Whether the SIMD function runs (otherwise the same arithmetic in JS). */
  readonly simd: boolean;
  /** Byte offsets in `memory`: x packed, `blocks` of ROWS rows, `inDim` inputs; W packed, `outDim` columns; b; y. */
  dense(x: number, blocks: number, inDim: number, w: number, outDim: number, b: number, y: number): void;
}

export function denseKernel(memory: WebAssembly.Memory): DenseKernel {
  const simd = simdDense(memory);
  if (simd) return { simd: true, dense: (x, blocks, inDim, w, outDim, b, y) => simd(x, blocks, inDim, w, outDim / COLUMNS, b, y, outDim * 4) };
  return { simd: false, dense: (x, blocks, inDim, w, outDim, b, y) => denseInJs(new Float32Array(memory.buffer), x, blocks, inDim, w, outDim, b, y) };
}

/** The same products in JS, in the same layouts (byte offsets into `f`'s buffer). */
export function denseInJs(f: Float32Array, x: number, blocks: number, inDim: number, w: number, outDim: number, b: number, y: number): void {
  const [x0, w0, b0, y0] = [x >> 2, w >> 2, b >> 2, y >> 2];
  for (let blk = 0; blk < blocks; blk++) {
    for (let p = 0; p < outDim / COLUMNS; p++) {
      for (let r = 0; r < ROWS; r++) {
        for (let c = 0; c < COLUMNS; c++) {
          let acc = f[b0 + p * COLUMNS + c] as number;
          for (let k = 0; k < inDim; k++) acc += (f[x0 + (blk * inDim + k) * ROWS + r] as number) * (f[w0 + (p * inDim + k) * COLUMNS + c] as number);
          f[y0 + (blk * ROWS + r) * outDim + p * COLUMNS + c] = acc;
        }
      }
    }
  }
}

/** W (inDim × outDim, row-major) in panels of COLUMNS, into `to` from index `at`. */
export function packWeights(w: Float32Array, inDim: number, outDim: number, to: Float32Array, at: number): void {
  for (let p = 0; p < outDim / COLUMNS; p++) {
    for (let k = 0; k < inDim; k++) {
      for (let c = 0; c < COLUMNS; c++) to[at + (p * inDim + k) * COLUMNS + c] = w[k * outDim + p * COLUMNS + c] as number;
    }
  }
}

/** Rows 0..n-1 of x (n × inDim, row-major) in blocks of ROWS, zero past n, into `to` from index `at`. */
export function packRows(x: Float32Array, n: number, inDim: number, to: Float32Array, at: number): number {
  const blocks = Math.ceil(n / ROWS);
  for (let blk = 0; blk < blocks; blk++) {
    for (let r = 0; r < ROWS; r++) {
      const row = blk * ROWS + r;
      const base = at + blk * inDim * ROWS + r;
      if (row < n) for (let k = 0; k < inDim; k++) to[base + k * ROWS] = x[row * inDim + k] as number;
      else for (let k = 0; k < inDim; k++) to[base + k * ROWS] = 0;
    }
  }
  return blocks;
}

type SimdDense = (x: number, blocks: number, inDim: number, w: number, panels: number, b: number, y: number, rowBytes: number) => void;

function simdDense(memory: WebAssembly.Memory): SimdDense | undefined {
  const S = 0xfd;
  const load = (offset: number) => [S, 0x00, 4, ...leb(offset)];
  const store = (offset: number) => [S, 0x0b, 4, ...leb(offset)];
  const splat = (offset: number) => [S, 0x09, 2, ...leb(offset)];
  const mulAdd = (acc: number, w: number) => [0x20, acc, 0x20, SPLAT, 0x20, w, S, 0xe6, 0x01, S, 0xe4, 0x01, 0x21, acc];
  // Params: 0 x, 1 blocks, 2 inDim, 3 w, 4 panels, 5 b, 6 y, 7 rowBytes.
  // Locals: 8 wp, 9 xp, 10 k, 11 yp, 12 bp, 13 p, 14 row (i32); 15-22 acc0-7, 23 w0, 24 w1, 25 splat (v128).
  const [WP, XP, KK, YP, BP, P, ROW] = [8, 9, 10, 11, 12, 13, 14];
  const ACC = [15, 16, 17, 18, 19, 20, 21, 22] as const;
  const [W0, W1, SPLAT] = [23, 24, 25];
  const storeRow = (r: number) => [
    ...(r === 0 ? [0x20, YP, 0x21, ROW] : [0x20, ROW, 0x20, 7, 0x6a, 0x21, ROW]),
    ...[0x20, ROW, 0x20, ACC[2 * r] as number, ...store(0)],
    ...[0x20, ROW, 0x20, ACC[2 * r + 1] as number, ...store(16)],
  ];
  const code = [
    0x02, 0x40, // block: done
    ...[0x20, 1, 0x45, 0x0d, 0], // no blocks: done
    0x03, 0x40, // loop over blocks of rows
    ...[0x20, 3, 0x21, WP, 0x20, 5, 0x21, BP, 0x20, 6, 0x21, YP, 0x20, 4, 0x21, P], // wp = w, bp = b, yp = y, p = panels
    0x03, 0x40, // loop over panels
    ...[0x20, BP, ...load(0), 0x22, ACC[0], 0x22, ACC[2], 0x22, ACC[4], 0x21, ACC[6]], // even accumulators = b[0..4]
    ...[0x20, BP, ...load(16), 0x22, ACC[1], 0x22, ACC[3], 0x22, ACC[5], 0x21, ACC[7]], // odd = b[4..8]
    ...[0x20, 0, 0x21, XP, 0x20, 2, 0x21, KK], // xp = x, k = inDim
    0x03, 0x40, // loop over inputs
    ...[0x20, WP, ...load(0), 0x21, W0, 0x20, WP, ...load(16), 0x21, W1],
    ...[0, 1, 2, 3].flatMap((r) => [0x20, XP, ...splat(4 * r), 0x21, SPLAT, ...mulAdd(ACC[2 * r] as number, W0), ...mulAdd(ACC[2 * r + 1] as number, W1)]),
    ...[0x20, WP, 0x41, 32, 0x6a, 0x21, WP, 0x20, XP, 0x41, 16, 0x6a, 0x21, XP], // wp += 32, xp += 16
    ...[0x20, KK, 0x41, 1, 0x6b, 0x22, KK, 0x0d, 0], // while --k
    0x0b,
    ...[0, 1, 2, 3].flatMap(storeRow),
    ...[0x20, YP, 0x41, 32, 0x6a, 0x21, YP, 0x20, BP, 0x41, 32, 0x6a, 0x21, BP], // yp += 32, bp += 32
    ...[0x20, P, 0x41, 1, 0x6b, 0x22, P, 0x0d, 0], // while --p
    0x0b,
    ...[0x20, 0, 0x20, 2, 0x41, 4, 0x74, 0x6a, 0x21, 0], // x += inDim × 16: the next block
    ...[0x20, 6, 0x20, 7, 0x41, 2, 0x74, 0x6a, 0x21, 6], // y += 4 rows
    ...[0x20, 1, 0x41, 1, 0x6b, 0x22, 1, 0x0d, 0], // while --blocks
    0x0b,
    0x0b,
    0x0b,
  ];
  return wasmFunction<SimdDense>('dense', 8, [7, 0x7f, 11, 0x7b], code, memory);
}
