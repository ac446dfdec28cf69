import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../bench/rng';
import { bulkLoad } from '../../bench/bulkLoad';
import { readFixtures } from '../../bench/transcripts';
import type { EmbeddingConfig } from '../../src/core/memory/semantic/embeddingClient';
import { COARSE_FROM, RESCORE, VectorCache } from '../../src/core/memory/semantic/vectorCache';
import { decodeVector, unit } from '../../src/core/memory/semantic/vectorCodec';
import { openServices, type Services } from '../../src/core/services';
import { startEmbeddingsServer } from './helpers/embeddingsServer';
import { transcriptFixtures } from './helpers/fixtures';
import { callTool as call } from './helpers/memoryCall';
import { tempHome, WASM_PATH } from './helpers/tempStore';

/** The bundled model's size: the bound is stated for it. */
const DIMS = 512;
const MB = 1024 * 1024;

/** A deterministic vector from a text's words: each word adds to three dimensions, so texts sharing words are near. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let h = 2166136261;
    for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    v[h % DIMS]! += 1;
    v[(h >>> 9) % DIMS]! -= 0.5;
    v[(h >>> 18) % DIMS]! += 0.25;
  }
  return v;
}


let config: EmbeddingConfig;
let embeddings: Awaited<ReturnType<typeof startEmbeddingsServer>>;
let s: Services;
let home: string;
let count = 0;
let cache: VectorCache;

let closed = false;

beforeAll(async () => {
  embeddings = await startEmbeddingsServer('words-512', vectorOf);
  config = embeddings.config;
  s = await openServices({ home: tempHome('vector-bound'), wasmPath: WASM_PATH }, { embeddings: config, semanticBackground: false });
  home = s.store.home;
  // Day-log entries in the words of the real transcripts, and facts each saved twice, written by the memory appliers.
  const words = [...new Set(readFixtures(transcriptFixtures()).flatMap((f) => f.text.toLowerCase().match(/[a-z]{3,}/g) ?? []))];
  const rng = new Rng(5);
  const notes = { *[Symbol.iterator]() { for (;;) yield Array.from({ length: rng.int(6, 16) }, () => rng.pick(words)).join(' '); } };
  bulkLoad(s.store.db, notes, 4_000, 1_000, words, rng);
  expect(await s.semantic.indexAll()).toMatchObject({ remaining: 0 });
  cache = new VectorCache(s.store);
  count = cache.size(config.model, 'memory');
}, 300_000);

afterAll(async () => {
  if (!closed) s?.store.close();
  await embeddings.close();
});

let stored: { key: string; codes: Int8Array; factor: number; signs: boolean[]; large: boolean[] }[] | undefined;

/** Every stored memory vector as the blobs hold it, and its signs (the store does not change after the set-up). */
function storedVectors() {
  const rows = s.store.db.exec("SELECT key, blob, idx FROM embeddings WHERE corpus = 'memory'")[0]!.values;
  stored ??= rows.map(([key, blob, idx]) => {
    const v = decodeVector(s.store.blobs.get(String(blob))!, DIMS, Number(idx))!;
    return { key: String(key), ...v, signs: signsOf(v.codes), large: largeOf(v.codes) };
  });
  return stored;
}

function signsOf(x: ArrayLike<number>): boolean[] {
  return Array.from({ length: DIMS }, (_, d) => (x[d] as number) > 0);
}

/** Where a code's magnitude is above the vector's median magnitude. */
function largeOf(codes: Int8Array): boolean[] {
  const median = Array.from(codes, (c) => Math.abs(c)).sort((a, b) => a - b)[DIMS >> 1] as number;
  return Array.from(codes, (c) => Math.abs(c) > median);
}

function cosineOf(v: { codes: Int8Array; factor: number }, q: Float32Array): number {
  let dot = 0;
  for (let d = 0; d < DIMS; d++) dot += (v.codes[d] as number) * (q[d] as number);
  return dot * v.factor;
}

/**
 * The ranking by its definition, from the stored bytes: the 9 × `pool` nearest by sign (every
 * vector tied at the cut distance included), of those the `pool` that score highest against the
 * query's values at two bits a dimension (±1, or ±4 where the code's magnitude is above the
 * vector's median), each of those scored exactly, best first, ties to the smaller key.
 */
function signsThenExact(query: Float32Array, pool: number) {
  const q = unit(query);
  const all = storedVectors();
  const qb = signsOf(q);
  const dist = all.map((v) => v.signs.reduce((n, b, d) => n + (b !== qb[d] ? 1 : 0), 0));
  const cut = [...dist].sort((a, b) => a - b)[Math.min(9 * pool, all.length) - 1] as number;
  const wide = all.filter((_, i) => (dist[i] as number) <= cut);
  const weighted = wide.map((v) => v.signs.reduce((s, b, d) => s + (b ? 1 : -1) * (v.large[d] ? 4 : 1) * (q[d] as number), 0));
  // Ties (equal vectors) go to the earlier slot: the cache fills slots in the rows' order, as read here.
  const best = wide.map((_, i) => i).sort((a, b) => (weighted[b] as number) - (weighted[a] as number) || a - b);
  return byCosine(wide.length > pool ? best.slice(0, pool).map((i) => wide[i] as (typeof wide)[number]) : wide, q);
}

function byCosine(vectors: ReturnType<typeof storedVectors>, q: Float32Array) {
  return vectors.map((v) => ({ key: v.key, similarity: cosineOf(v, q) })).sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1));
}

const QUERIES = ['a test is failing', 'install the extension and restart', 'which model answers the question', 'read the file and fix the bug in the parser'];

describe('the kept vectors', () => {
  it('hold about 0.1 KB an item in this process, not the vectors themselves (0.7 KB)', async () => {
    expect(count).toBeGreaterThan(5_000);
    s.semantic.rank(Float32Array.from(vectorOf(QUERIES[0]!)), { corpus: 'memory', k: 5 });
    const status = await call(s, 'memory_status', {});
    const held = ((status.memory as { reserved_mb?: Record<string, number> }).reserved_mb?.vectors ?? 0) * MB;
    // The signs and the magnitude bits (64 bytes each), a key's slot (4 + up to 16), each at most
    // doubled by growth, and one wasm page and the first arrays' room: the vectors' own 516
    // bytes would be far over.
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(count * 296 + 0.2 * MB);
    // Their bytes and keys are in a scratch file of this process, beside the store.
    const scratch = fs.readdirSync(home).filter((f) => f.startsWith(`vectors.tmp-${process.pid}-`));
    // Records and bits (signs, then magnitude bits), for the service's cache and for the test's.
    expect(scratch).toHaveLength(4);
    for (const f of scratch.filter((name) => name.endsWith('memory'))) expect(fs.statSync(path.join(home, f)).size).toBeGreaterThanOrEqual(count * (4 + DIMS));
    for (const f of scratch.filter((name) => name.endsWith('bits'))) expect(fs.statSync(path.join(home, f)).size).toBe(count * 128);
  });

  it('rank by the two passes by sign and exact rescoring, as defined', () => {
    for (const text of QUERIES) {
      const q = Float32Array.from(vectorOf(text));
      for (const want of [10, 64, 800]) {
        const got = cache.ordered(config.model, 'memory', q, want);
        const pool = Math.max(RESCORE, want);
        expect(got.length).toBe(pool);
        expect(got).toEqual(signsThenExact(q, pool));
      }
    }
  });

  it('rank every vector exactly as a full scan does when all are scored', () => {
    const scanAll = new VectorCache(s.store, { coarseFrom: Number.MAX_SAFE_INTEGER, rescore: 1_000 });
    try {
      for (const text of QUERIES) {
        const q = Float32Array.from(vectorOf(text));
        expect(scanAll.ordered(config.model, 'memory', q, 20)).toEqual(byCosine(storedVectors(), unit(q)));
      }
      // Each cache has a scratch file of its own.
      expect(fs.readdirSync(home).filter((f) => f.startsWith(`vectors.tmp-${process.pid}-`))).toHaveLength(6);
    } finally {
      scanAll.close();
    }
    expect(fs.readdirSync(home).filter((f) => f.startsWith(`vectors.tmp-${process.pid}-`))).toHaveLength(4);
  });

  it('page the signs past what a corpus keeps in memory, ranking the same', () => {
    const paged = new VectorCache(s.store, { coarseFrom: COARSE_FROM, rescore: RESCORE, residentSigns: 1_000 });
    try {
      expect(paged.size(config.model, 'memory')).toBe(count);
      for (const text of QUERIES) {
        const q = Float32Array.from(vectorOf(text));
        for (const want of [10, 800]) expect(paged.ordered(config.model, 'memory', q, want)).toEqual(cache.ordered(config.model, 'memory', q, want));
      }
      // A block of 1,000 signs and the key slots: the signs of the rest are in their file.
      expect(paged.heldBytes()).toBeLessThan(cache.heldBytes() / 2);
      expect(paged.heldBytes()).toBeLessThanOrEqual(count * 24 + 0.2 * MB);
    } finally {
      paged.close();
    }
  });

  it('leave no scratch file once the store is closed', () => {
    s.store.close();
    closed = true;
    expect(fs.readdirSync(home).filter((f) => f.startsWith('vectors.tmp-'))).toEqual([]);
  });
});
