import * as fs from 'node:fs';
import * as path from 'node:path';
import * as core from '@energetic-ai/core';
import { EmbeddingsModel, type EmbeddingsModelData } from '@energetic-ai/embeddings';
import { describe, expect, it } from 'vitest';
import { denseInJs, denseKernel, packRows, packWeights, ROWS } from '../../src/core/memory/semantic/denseKernel';
import { bundledModel, LocalEmbedder } from '../../src/core/memory/semantic/localModel';
import { UseLiteModel } from '../../src/core/memory/semantic/useLiteModel';
import { generator } from './helpers/fixedSequence';
import { transcriptFixtures } from './helpers/fixtures';

const DIST = path.resolve(__dirname, '../../dist');
const MODEL_DIR = path.join(DIST, 'use-lite');

/** The model as it shipped: @energetic-ai/embeddings' tokenizer, and the graph run by TensorFlow.js (devDependencies, for this test only). */
async function reference(): Promise<EmbeddingsModel> {
  const tf = core as unknown as { setWasmPaths(p: string): void; setBackend(n: string): Promise<boolean>; ready(): Promise<void>; loadGraphModel(h: unknown): Promise<EmbeddingsModelData['model']>; io: typeof core.io };
  tf.setWasmPaths(path.resolve(__dirname, '../../node_modules/@energetic-ai/core/dist') + path.sep);
  await tf.setBackend('wasm');
  await tf.ready();
  const model = await tf.loadGraphModel(tf.io.fileSystem(path.join(MODEL_DIR, 'model.json')));
  const vocabulary = JSON.parse(fs.readFileSync(path.join(MODEL_DIR, 'vocab.json'), 'utf8')) as [string, number][];
  return new EmbeddingsModel({ model, vocabulary });
}

/** Real text: every string of the shared transcripts (Claude Code, Codex, Copilot; Japanese among them), sampled, and a few edge cases. */
function texts(limit: number): string[] {
  const root = transcriptFixtures();
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.trim().length >= 3) out.add(v.slice(0, 1200));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const f of fs.readdirSync(root, { recursive: true }).map(String).filter((f) => /\.jsonl?$/.test(f)).sort()) {
    const text = fs.readFileSync(path.join(root, f), 'utf8');
    if (f.endsWith('.json')) walk(JSON.parse(text));
    else for (const line of text.split('\n')) if (line.trim()) walk(JSON.parse(line));
  }
  const real = [...out];
  const step = Math.max(1, Math.floor(real.length / limit));
  return [...real.filter((_, i) => i % step === 0).slice(0, limit), '', 'x', 'deploy to staging '.repeat(60), '日本語の文章も埋め込む', 'emoji 🚀 and ünïcödé', '中文句子里的每个词'];
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

describe('the bundled model run from its weights', () => {
  it('tokenizes real text to the ids the shipped tokenizer gives', async () => {
    const ref = await reference();
    const ours = UseLiteModel.load(MODEL_DIR);
    const sample = texts(400);
    expect(sample.length).toBeGreaterThan(100);
    expect(sample.some((t) => /[\u3040-\u30ff]/.test(t))).toBe(true);
    for (const t of sample) expect(ours.tokenizer.encode(t), t.slice(0, 80)).toEqual(ref.tokenizer.encode(t));
  }, 120_000);

  it('gives the vectors TensorFlow.js gives for the same texts, within float rounding', async () => {
    const ref = await reference();
    const ours = UseLiteModel.load(MODEL_DIR);
    expect(ours.simd).toBe(true);
    let worst = 1;
    let largest = 0;
    for (const t of texts(40)) {
      if (!t) continue; // the graph refuses a batch with no token at all; ours gives tanh(b) normalised
      const [want] = (await ref.embed([t])) as number[][];
      const got = ours.embed(t);
      expect(got.length).toBe(512);
      worst = Math.min(worst, cosine(got, want as number[]));
      for (let i = 0; i < 512; i++) largest = Math.max(largest, Math.abs((got[i] as number) - ((want as number[])[i] as number)));
    }
    // Measured: cosine ≥ 0.9999997, largest difference of a coordinate ≈ 1e-6.
    expect(worst).toBeGreaterThan(0.99999);
    expect(largest).toBeLessThan(1e-5);
    expect(Math.abs(cosine(ours.embed('how do we deploy to staging'), ours.embed('how do we deploy to staging')) - 1)).toBeLessThan(1e-6);
  }, 180_000);

  it('in its worker thread gives the bits it gives in this thread, and says its products run as SIMD', async () => {
    const ours = UseLiteModel.load(MODEL_DIR);
    const sample = texts(12);
    const embedder = new LocalEmbedder(bundledModel(DIST));
    try {
      const vectors = await embedder.embed(sample, 120_000);
      expect(embedder.simd).toBe(true);
      // The embedder clips texts to LOCAL_MAX_CHARS (1,200), as texts() does.
      expect(vectors.map((v) => Array.from(v))).toEqual(sample.map((t) => Array.from(ours.embed(t))));
    } finally {
      embedder.close();
    }
  }, 120_000);
});

describe('the dense kernel', () => {
  it('computes x · W + b as the JS loop does, for row counts that are not a multiple of the block', () => {
    const next = generator(7);
    const [inDim, outDim] = [24, 40];
    const w = Float32Array.from({ length: inDim * outDim }, () => next() * 2 - 1);
    const b = Float32Array.from({ length: outDim }, () => next() - 0.5);
    for (const n of [1, 3, 4, 5, 9]) {
      const x = Float32Array.from({ length: n * inDim }, () => next() * 4 - 2);
      const memory = new WebAssembly.Memory({ initial: 1 });
      const heap = new Float32Array(memory.buffer);
      packWeights(w, inDim, outDim, heap, 0);
      heap.set(b, inDim * outDim);
      const xAt = inDim * outDim + outDim;
      const blocks = packRows(x, n, inDim, heap, xAt);
      expect(blocks).toBe(Math.ceil(n / ROWS));
      const yAt = xAt + blocks * ROWS * inDim;
      const kernel = denseKernel(memory);
      expect(kernel.simd).toBe(true);
      kernel.dense(xAt * 4, blocks, inDim, 0, outDim, inDim * outDim * 4, yAt * 4);
      const simd = heap.slice(yAt, yAt + n * outDim);
      denseInJs(heap, xAt * 4, blocks, inDim, 0, outDim, inDim * outDim * 4, yAt * 4);
      const js = heap.slice(yAt, yAt + n * outDim);
      for (let r = 0; r < n; r++) {
        for (let c = 0; c < outDim; c++) {
          let want = b[c] as number;
          for (let k = 0; k < inDim; k++) want += (x[r * inDim + k] as number) * (w[k * outDim + c] as number);
          expect(simd[r * outDim + c]).toBeCloseTo(want, 4);
          expect(js[r * outDim + c]).toBeCloseTo(want, 4);
        }
      }
    }
  });
});
