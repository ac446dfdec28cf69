/**
 * Vectors at rest: each one normalised to unit length and quantised to one signed byte per
 * dimension, with a float32 factor in front that turns the bytes' dot product with a unit query
 * back into the cosine with the quantised vector. A 512-dimension vector takes 516 bytes
 * instead of 2,048 as float32.
 */
export const VECTOR_ENCODING = 'int8';

export function bytesPerVector(dims: number): number {
  return 4 + dims;
}

/** `vectors` back to back as one blob. */
export function encodeVectors(vectors: readonly Float32Array[], dims: number): Uint8Array {
  const per = bytesPerVector(dims);
  const out = new Uint8Array(vectors.length * per);
  const view = new DataView(out.buffer);
  const codes = new Int8Array(out.buffer);
  vectors.forEach((v, i) => {
    let norm = 0;
    let max = 0;
    for (let d = 0; d < dims; d++) {
      const x = v[d] as number;
      norm += x * x;
      if (Math.abs(x) > max) max = Math.abs(x);
    }
    const step = max / 127 || 1;
    let qNorm = 0;
    for (let d = 0; d < dims; d++) {
      const c = Math.round((v[d] as number) / step);
      codes[i * per + 4 + d] = c;
      qNorm += c * c;
    }
    // A zero vector (empty text) matches nothing: its factor is 0.
    view.setFloat32(i * per, norm > 0 && qNorm > 0 ? 1 / Math.sqrt(qNorm) : 0, true);
  });
  return out;
}

/** The codes and factor of vector `index` in a blob `encodeVectors` wrote. */
export function decodeVector(blob: Uint8Array, dims: number, index: number): { codes: Int8Array; factor: number } | undefined {
  const per = bytesPerVector(dims);
  const at = index * per;
  if (at + per > blob.byteLength) return undefined;
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  return { factor: view.getFloat32(at, true), codes: new Int8Array(blob.buffer, blob.byteOffset + at + 4, dims) };
}

export function unit(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  const norm = Math.sqrt(sum) || 1;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) / norm;
  return out;
}
