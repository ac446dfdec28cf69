import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingConfig } from '../../src/core/memory/semantic/embeddingClient';
import { SemanticService } from '../../src/core/memory/semantic/semanticService';
import { VectorCache } from '../../src/core/memory/semantic/vectorCache';
import { bytesPerVector, decodeVector, encodeVectors, unit } from '../../src/core/memory/semantic/vectorCodec';
import { openServices } from '../../src/core/services';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { startEmbeddingsServer } from './helpers/embeddingsServer';
import { callTool as call } from './helpers/memoryCall';
import { tempHome, WASM_PATH } from './helpers/tempStore';

/** Not a multiple of 32: the sign pass packs the last word partly. */
const DIMS = 40;

/** A deterministic bag-of-words vector: each word adds to one dimension. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % DIMS]! += 1;
    v[(h >>> 8) % DIMS]! -= 0.5;
  }
  return v;
}

const calls: number[] = [];
let config: EmbeddingConfig;
let embeddings: Awaited<ReturnType<typeof startEmbeddingsServer>>;
beforeAll(async () => {
  embeddings = await startEmbeddingsServer('bag-of-words', vectorOf, (size) => calls.push(size));
  config = embeddings.config;
});
afterAll(() => embeddings.close());

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

describe('stored vectors', () => {
  it('keep the cosine within 0.01 in one byte a dimension, and a zero vector matches nothing', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const vectors = Array.from({ length: 200 }, () => Float32Array.from({ length: 512 }, rand));
    const blob = encodeVectors([...vectors, new Float32Array(512)], 512);
    expect(blob.byteLength).toBe(201 * bytesPerVector(512));
    const q = unit(vectors[0] as Float32Array);
    let worst = 0;
    vectors.forEach((v, i) => {
      const { codes, factor } = decodeVector(blob, 512, i)!;
      let dot = 0;
      for (let d = 0; d < 512; d++) dot += (codes[d] as number) * (q[d] as number);
      worst = Math.max(worst, Math.abs(dot * factor - cosine(q, unit(v))));
    });
    expect(worst).toBeLessThan(0.01);
    expect(decodeVector(blob, 512, 200)?.factor).toBe(0);
  });

  it('the sign pass over many vectors ranks the best the way the full scan does', async () => {
    const s = await openServices({ home: tempHome('semantic-vectors'), wasmPath: WASM_PATH }, { embeddings: config, semanticBackground: false });
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
    for (let i = 0; i < 80; i++) await call(s, 'remember', { statement: `${words[i % 12]} ${words[(i * 5) % 12]} ${words[(i * 7 + 3) % 12]} note ${i}` });
    expect(await s.semantic.indexAll()).toEqual({ embedded: 80, remaining: 0 });
    const coarse = new SemanticService(s.store, config, { coarseFrom: 10, rescore: 30 });
    for (const query of ['alpha bravo', 'kilo lima golf', 'echo', 'india juliet hotel delta']) {
      const v = Float32Array.from(vectorOf(query));
      const exact = s.semantic.rank(v, { corpus: 'memory', k: 3 });
      expect(exact).toHaveLength(3);
      expect(coarse.rank(v, { corpus: 'memory', k: 3 })).toEqual(exact);
    }
    coarse.close();
    s.store.close();
  });

  it('rank the filtered corpus exactly as a full scan of every stored vector does', async () => {
    const s = await openServices({ home: tempHome('semantic-exact'), wasmPath: WASM_PATH }, { embeddings: config, semanticBackground: false });
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
    // Facts saved twice (the first value superseded), entries in two scopes: filters drop many ranked keys.
    for (let i = 0; i < 60; i++) {
      const scope = i % 3 ? 'global' : 'project:web';
      await call(s, 'remember', { statement: `${words[i % 12]} ${words[(i * 5) % 12]} entry ${i}`, scope });
      if (i % 2) {
        for (const v of [`${words[(i * 7) % 12]} old`, `${words[(i * 11 + 1) % 12]} new`]) {
          await call(s, 'remember', { statement: `fact ${i} ${v}`, subject: `${words[i % 12]} ${i}`, predicate: 'uses', object: v, scope });
        }
      }
    }
    await s.semantic.indexAll();
    const db = s.store.db;
    const rows = db.exec("SELECT key, blob, idx, dims FROM embeddings WHERE corpus = 'memory'")[0]!.values;
    const stored = rows.map(([key, blob, idx, dims]) => ({ key: String(key), ...decodeVector(s.store.blobs.get(String(blob))!, Number(dims), Number(idx))! }));
    const superseded = new Set(db.exec('SELECT id FROM facts WHERE superseded_at IS NOT NULL')[0]!.values.map(([id]) => `fact:${String(id)}`));
    const scopeOf = new Map<string, string>([
      ...db.exec('SELECT id, scope FROM notes')[0]!.values.map(([id, sc]) => [String(id), String(sc)] as [string, string]),
      ...db.exec('SELECT id, scope FROM facts')[0]!.values.map(([id, sc]) => [`fact:${String(id)}`, String(sc)] as [string, string]),
    ]);
    expect(superseded.size).toBe(30);
    const reference = (q: Float32Array, k: number, scope?: string, includeHistory = false) => stored
      .filter((v) => (includeHistory || !superseded.has(v.key)) && (scope === undefined || scopeOf.get(v.key) === scope))
      .map((v) => {
        const u = unit(q);
        let dot = 0;
        for (let d = 0; d < DIMS; d++) dot += (v.codes[d] as number) * (u[d] as number);
        return { key: v.key, similarity: dot * v.factor };
      })
      .sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1))
      .slice(0, k)
      .map((r) => ({ key: r.key, similarity: Math.round(r.similarity * 10_000) / 10_000 }));
    for (const query of ['alpha bravo', 'kilo lima golf old', 'echo new', 'india juliet hotel delta']) {
      const q = Float32Array.from(vectorOf(query));
      for (const [k, scope, includeHistory] of [[5, undefined, false], [40, undefined, false], [25, 'project:web', false], [30, undefined, true], [500, undefined, false]] as const) {
        const got = s.semantic.rank(q, { corpus: 'memory', k, scope, includeHistory }).map(({ key, similarity }) => ({ key, similarity }));
        expect(got).toEqual(reference(q, k, scope, includeHistory));
      }
    }
    s.store.close();
  });

  it('leave superseded facts out of a ranking of current memory before its passes, as values are superseded and arrive out of order', async () => {
    const s = await openServices({ home: tempHome('semantic-current'), wasmPath: WASM_PATH }, { embeddings: config, semanticBackground: false });
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
    const save = (id: string, i: number, object: string, at: number) =>
      s.store.commit(() => ({ op: { op: 'memory.fact.saved', at, id, subject: `${words[i % 12]} service ${i}`, predicate: 'uses', object, scope: 'global', source: 'test', statement: null, cites: [] }, result: undefined }));
    for (let i = 0; i < 30; i++) await call(s, 'remember', { statement: `${words[i % 12]} ${words[(i * 5) % 12]} entry ${i}` });
    for (let i = 0; i < 40; i++) await save(`f${i}-first`, i, `${words[(i * 7) % 12]} first`, 1_000_000 + i);
    // Sign passes over every vector, over vectors paged from their file, and a scan of all of them.
    const caches = [{ coarseFrom: 10, rescore: 5 }, { coarseFrom: 10, rescore: 5, residentSigns: 16 }, { coarseFrom: Number.MAX_SAFE_INTEGER, rescore: 0 }].map((o) => new VectorCache(s.store, o));
    const check = async (superseded: number) => {
      await s.semantic.indexAll();
      const historical = new Set(queryRows(s.store.db, 'SELECT id FROM facts WHERE superseded_at IS NOT NULL').map((r) => `fact:${String(r.id)}`));
      expect(historical.size).toBe(superseded);
      const all = queryRows(s.store.db, "SELECT key FROM embeddings WHERE corpus = 'memory'").map((r) => String(r.key));
      const current = all.filter((k) => !historical.has(k)).sort();
      for (const cache of caches) {
        for (const query of ['alpha bravo', 'kilo lima first', 'echo second', 'india juliet hotel']) {
          const q = Float32Array.from(vectorOf(query));
          // Everything asked for: every current key once, none superseded.
          expect(cache.ordered(config.model, 'memory', q, 1_000, true).map((r) => r.key).sort()).toEqual(current);
          expect(cache.ordered(config.model, 'memory', q, 1_000).map((r) => r.key).sort()).toEqual([...all].sort());
          // A pool smaller than the corpus holds as many as asked for, all current.
          const pool = cache.ordered(config.model, 'memory', q, 8, true);
          expect(pool.length).toBeGreaterThanOrEqual(8);
          expect(pool.filter((r) => historical.has(r.key))).toEqual([]);
        }
      }
    };
    await check(0);
    // Later values supersede half of them: the log names each, read past where the caches last read.
    for (let i = 0; i < 20; i++) await save(`f${i}-second`, i, `${words[(i * 11) % 12]} second`, 2_000_000 + i);
    await check(20);
    // Values older than the current ones, arriving late (a team pool): recorded already superseded, embedded after.
    for (let i = 20; i < 30; i++) await save(`f${i}-older`, i, `${words[(i * 3) % 12]} older`, 500_000 + i);
    await check(30);
    for (const cache of caches) cache.close();
    s.store.close();
  });

  it('follow a note as it is edited: the old text stops answering, the new one answers', async () => {
    const home = tempHome('semantic-edit');
    const s = await openServices({ home, wasmPath: WASM_PATH }, { embeddings: config, semanticBackground: false });
    const file = path.join(home, 'vault', 'trips', 'spring.md');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '# Spring\n\nWe fly to Lisbon in May with the whole family.\n');
    await call(s, 'index_memory', {});
    const first = await s.semantic.nearest('Lisbon family', { corpus: 'memory', k: 1 });
    expect(first.ok && first.hits[0]?.key).toMatch(/^chunk:/);
    const gone = Number(queryScalar(s.store.db, 'SELECT n FROM embeddings_gone'));

    fs.writeFileSync(file, '# Spring\n\nThe dentist appointment moved to Tuesday morning.\n');
    const later = new Date(fs.statSync(file).mtimeMs + 5_000);
    fs.utimesSync(file, later, later);
    await call(s, 'index_memory', {});
    // The edit took the old chunk's vector away (which the cache cannot see by row id alone).
    expect(Number(queryScalar(s.store.db, 'SELECT n FROM embeddings_gone'))).toBeGreaterThan(gone);
    const r = await call(s, 'search_memory', { query: 'dentist Tuesday' });
    const hits = r.hits as { text: string; similarity: number }[];
    expect(hits[0]?.text).toContain('dentist');
    expect(hits.some((h) => h.text.includes('Lisbon'))).toBe(false);
    s.store.close();
  });
});
