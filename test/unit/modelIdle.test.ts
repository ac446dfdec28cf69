import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledModel, LocalEmbedder, MODEL_MEMORY_BYTES } from '../../src/core/memory/semantic/localModel';
import { openServices, type Services } from '../../src/core/services';
import { callTool as call } from './helpers/memoryCall';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const DIST = path.resolve(__dirname, '../../dist');
const MB = 1024 * 1024;
/** Short, so the test sees the thread stop; the product waits five minutes (MODEL_IDLE_MS). */
const IDLE_MS = 1_500;

const NOTES = [
  'The car is parked in level 3 of the garage on Elm Street',
  'Lunch with the design team is at noon on Fridays',
  'The staging database password rotates every 90 days',
  'Our cat Miso needs her vaccination appointment in March',
];

const open: Services[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.store.close();
});

interface Status {
  semantic: boolean;
  embeddings: { loaded: boolean };
  memory: { cache: { limit_mb: number }; reserved_mb?: Record<string, number> };
}

async function until(what: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

describe('the bundled model when idle', () => {
  it('stops its thread, gives its reservation back to the chunk cache, and answers the same once started again', async () => {
    const s = await openServices({ home: tempHome('model-idle'), wasmPath: WASM_PATH }, {
      embeddings: { local: { ...bundledModel(DIST).local, idleMs: IDLE_MS } },
      semanticBackground: false,
    });
    open.push(s);
    for (const statement of NOTES) await call(s, 'remember', { statement });
    expect(await s.semantic.indexAll()).toMatchObject({ remaining: 0 });
    const first = await s.semantic.nearest('where did I leave my automobile?', { corpus: 'memory', k: 4 });
    expect(first.ok && first.hits[0]?.key.startsWith('entry:')).toBe(true);
    const running = (await call(s, 'memory_status', {})) as unknown as Status;
    expect(running.embeddings.loaded).toBe(true);
    expect(running.memory.reserved_mb?.embedding_model).toBe(MODEL_MEMORY_BYTES / MB);

    await until(() => s.semantic.state().loaded === false, IDLE_MS + 10_000);
    const stopped = (await call(s, 'memory_status', {})) as unknown as Status;
    // memory_status does not start the model to ask it: its last answer stands.
    expect(stopped).toMatchObject({ semantic: true, embeddings: { loaded: false } });
    expect(s.semantic.state().loaded).toBe(false);
    expect(stopped.memory.reserved_mb?.embedding_model).toBeUndefined();
    expect(stopped.memory.cache.limit_mb).toBeGreaterThan(running.memory.cache.limit_mb);

    // The next query starts it again and gets the same answer, to the bit.
    const t0 = performance.now();
    const again = await s.semantic.nearest('where did I leave my automobile?', { corpus: 'memory', k: 4 });
    const restartMs = performance.now() - t0;
    expect(again).toEqual(first);
    const t1 = performance.now();
    await s.semantic.nearest('where did I leave my automobile?', { corpus: 'memory', k: 4 });
    console.log(`first query after a restart ${restartMs.toFixed(0)} ms, the next ${(performance.now() - t1).toFixed(0)} ms`);
    const restarted = (await call(s, 'memory_status', {})) as unknown as Status;
    expect(restarted.embeddings.loaded).toBe(true);
    expect(restarted.memory.reserved_mb?.embedding_model).toBe(MODEL_MEMORY_BYTES / MB);
  }, 120_000);

  it('is not started by memory_status: a process that never searches never holds it', async () => {
    const s = await openServices({ home: tempHome('model-unstarted'), wasmPath: WASM_PATH }, {
      embeddings: bundledModel(DIST),
      semanticBackground: false,
    });
    open.push(s);
    await call(s, 'remember', { statement: NOTES[0] as string });
    const status = (await call(s, 'memory_status', {})) as unknown as Status;
    expect(status).toMatchObject({ semantic: true, embeddings: { loaded: false } });
    expect(status.memory.reserved_mb?.embedding_model).toBeUndefined();
    expect(s.semantic.state().loaded).toBe(false);
    // The first search starts it.
    expect((await s.semantic.nearest('where is the car?', { corpus: 'memory', k: 1 })).ok).toBe(true);
    expect(((await call(s, 'memory_status', {})) as unknown as Status).embeddings.loaded).toBe(true);
  }, 120_000);

  it('gives the same vectors before and after a stop, and is not stopped while work is queued', async () => {
    const reserved: number[] = [];
    const model = new LocalEmbedder({ local: { ...bundledModel(DIST).local, idleMs: 300 } }, (bytes) => reserved.push(bytes));
    try {
      const texts = ['the staging password rotates', 'a cat at the vet'];
      expect(model.idle).toBe(true); // not started yet
      const before = await model.embed(texts, 60_000);
      // Longer than the idle time, but the thread is busy throughout: it must not stop under it.
      const bulk = await model.embed(Array.from({ length: 40 }, (_, i) => `note number ${i} about the garage`), 60_000);
      expect(bulk).toHaveLength(40);
      expect(model.idleStops).toBe(0);
      await until(() => !model.loaded, 10_000);
      expect(model.idleStops).toBe(1);
      expect(model.idle).toBe(true);
      expect(reserved).toEqual([MODEL_MEMORY_BYTES, 0]);
      const after = await model.embed(texts, 60_000);
      expect(after.map((v) => Array.from(v))).toEqual(before.map((v) => Array.from(v)));
      expect(model.loaded).toBe(true);
      expect(reserved).toEqual([MODEL_MEMORY_BYTES, 0, MODEL_MEMORY_BYTES]);
    } finally {
      model.close();
    }
    expect(reserved.at(-1)).toBe(0);
  }, 120_000);
});
