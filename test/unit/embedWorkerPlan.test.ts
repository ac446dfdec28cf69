import * as fs from 'node:fs';
import * as path from 'node:path';
import * as core from '@energetic-ai/core';
import { EmbeddingsModel, type EmbeddingsModelData } from '@energetic-ai/embeddings';
import { describe, expect, it } from 'vitest';
import { PASS } from '../../src/core/memory/semantic/embedWorker';
import { bundledModel, LocalEmbedder } from '../../src/core/memory/semantic/localModel';
import { transcriptFixtures } from './helpers/fixtures';

const DIST = path.resolve(__dirname, '../../dist');

/** The model as @energetic-ai/embeddings runs it (`executeAsync`), in this process. */
async function reference(): Promise<EmbeddingsModel> {
  const tf = core as unknown as { setWasmPaths(p: string): void; setBackend(n: string): Promise<boolean>; ready(): Promise<void>; loadGraphModel(h: unknown): Promise<EmbeddingsModelData['model']>; io: typeof core.io };
  tf.setWasmPaths(DIST + path.sep);
  await tf.setBackend('wasm');
  await tf.ready();
  const model = await tf.loadGraphModel(tf.io.fileSystem(path.join(DIST, 'use-lite', 'model.json')));
  const vocabulary = JSON.parse(fs.readFileSync(path.join(DIST, 'use-lite', 'vocab.json'), 'utf8')) as [string, number][];
  return new EmbeddingsModel({ model, vocabulary });
}

/** Real text of several lengths: user prompts from the transcripts, one past the model's 128 tokens, one not English. */
function texts(): string[] {
  const dir = path.join(transcriptFixtures(), 'claude-code');
  const out: string[] = [];
  for (const f of fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const content = (JSON.parse(line || '{}') as { type?: string; message?: { content?: unknown } }).type === 'user' ? (JSON.parse(line) as { message: { content: unknown } }).message.content : undefined;
      if (typeof content === 'string' && content.trim()) out.push(content.slice(0, 1200));
      if (out.length >= 11) break;
    }
    if (out.length >= 11) break;
  }
  return [...out, 'x', 'deploy to staging '.repeat(60), '日本語の文章も埋め込む'];
}

describe('the bundled model run by its plan', () => {
  it('gives the same bits as executeAsync, alone and in batches, and says it runs that way', async () => {
    const sample = texts();
    expect(sample.length).toBeGreaterThanOrEqual(12);
    const model = await reference();
    // In the worker's passes: a pass is padded to its longest text, which moves the low bits.
    const want: number[][] = [];
    for (let i = 0; i < sample.length; i += PASS) want.push(...(await model.embed(sample.slice(i, i + PASS))));
    const one = await Promise.all(sample.slice(0, 4).map((t) => model.embed([t])));
    const embedder = new LocalEmbedder(bundledModel(DIST));
    try {
      // One request of every text: the worker runs them in passes, each padded to its longest.
      const batch = await embedder.embed(sample, 120_000);
      expect(embedder.planned).toBe(true);
      expect(batch.map((v) => Array.from(v))).toEqual(want.map((v) => Array.from(Float32Array.from(v))));
      for (const [i, t] of sample.slice(0, 4).entries()) {
        const [v] = await embedder.embed([t], 60_000, true);
        expect(Array.from(v as Float32Array)).toEqual(Array.from(Float32Array.from((one[i] as number[][])[0] as number[])));
      }
    } finally {
      embedder.close();
    }
  }, 180_000);
});
