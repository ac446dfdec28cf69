/**
 * A one-function WebAssembly module written out as bytes, for the small SIMD kernels of semantic
 * recall (signTable.ts, denseKernel.ts): each is about a hundred bytes of code, and a toolchain to
 * produce them would be the larger part. The function takes `params` i32s, returns nothing, and
 * works in the memory it is given.
 */
export function wasmFunction<F>(exportName: string, params: number, locals: number[], code: number[], memory: WebAssembly.Memory): F | undefined {
  const body = [...leb(locals.length / 2), ...locals, ...code];
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, params, ...new Array<number>(params).fill(0x7f), 0]),
    ...section(2, [1, ...name('env'), ...name('memory'), 2, 0, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name(exportName), 0, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
    return instance.exports[exportName] as F;
  } catch {
    // The runtime refuses the module (no SIMD): the caller runs its JS loop.
    return undefined;
  }
}

/** Unsigned LEB128, as the format encodes sizes, indices and memory offsets. */
export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function section(id: number, bytes: number[]): number[] {
  return [id, ...leb(bytes.length), ...bytes];
}

function name(s: string): number[] {
  return [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
}
