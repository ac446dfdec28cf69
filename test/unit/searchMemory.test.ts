import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../src/core/services';
import { tempHome, WASM_PATH } from './helpers/tempStore';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-01T10:00:00Z');
const DIMS = 32;
/** Words the stand-in treats as one meaning, the way a real model places synonyms close together. */
const SAME_MEANING: Record<string, string> = { automobile: 'car', vehicle: 'car', cars: 'car', sedan: 'car', physician: 'doctor', medic: 'doctor' };

/** A deterministic bag-of-meanings vector: each (synonym-folded) word adds to one dimension. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const word = SAME_MEANING[raw] ?? raw;
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % DIMS]! += 1;
  }
  return v;
}

/** A tiny local OpenAI-compatible /v1/embeddings server standing in for a real embedding service (Ollama, OpenAI). */
class StandInEmbeddings {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      this.requests.push({ url: req.url ?? '', auth: req.headers.authorization });
      if (this.failing || req.url !== '/v1/embeddings') {
        res.writeHead(this.failing ? 503 : 404, { 'content-type': 'text/plain' }).end('unavailable');
        return;
      }
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model, data: input.map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(t) })) }));
    });
  });
  requests: { url: string; auth: string | undefined }[] = [];
  failing = false;
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('search_memory', () => {
  const standIn = new StandInEmbeddings();
  beforeAll(() => standIn.start());
  afterAll(() => standIn.stop());

  it('with no embedding provider configured returns no hits and says why; memory_status agrees', async () => {
    const s = await openServices({ home: tempHome('semantic'), wasmPath: WASM_PATH, now: () => T0 }, { embeddings: { missing: 'no embedding provider is configured: set RECOLLECT_EMBEDDINGS_URL' } });
    await call(s, 'remember', { statement: 'The car is parked in lot B' });
    const r = await call(s, 'search_memory', { query: 'where is the automobile' });
    expect(r).toMatchObject({ ok: true, semantic: false, hits: [], reason: expect.stringContaining('RECOLLECT_EMBEDDINGS_URL') });
    expect(await call(s, 'memory_status', {})).toMatchObject({ semantic: false, semantic_reason: expect.stringContaining('RECOLLECT_EMBEDDINGS_URL') });
    s.store.close();
  });

  it('finds notes by meaning through a local stand-in for a real embedding service, with scope, top_k and history', async () => {
    let clock = T0;
    const s = await openServices({ home: tempHome('semantic'), wasmPath: WASM_PATH, now: () => clock }, { embeddings: { url: standIn.url, model: 'stand-in', apiKey: 'k-123' } });
    expect(await call(s, 'memory_status', {})).toMatchObject({ semantic: true, semantic_reason: null, embeddings: { model: 'stand-in', endpoint: `${standIn.url}/v1/embeddings` } });
    await call(s, 'remember', { statement: 'The car is parked in lot B' });
    await call(s, 'remember', { statement: 'Lunch is at noon on Fridays' });
    await call(s, 'remember', { statement: 'A sedan for the project demo is booked', scope: 'project:demo' });
    await call(s, 'save_memory', { subject: 'family doctor', predicate: 'is', object: 'Dr. Okafor' });
    clock += 1000;
    await call(s, 'save_memory', { subject: 'family doctor', predicate: 'is', object: 'Dr. Lima' });

    // Keyword search cannot connect "automobile" with "car"; the meaning search can.
    expect(await call(s, 'search_text', { query: 'automobile' })).toMatchObject({ total: 0 });
    const found = await call(s, 'search_memory', { query: 'where did I leave the automobile' });
    expect(found).toMatchObject({ ok: true, semantic: true, model: 'stand-in' });
    const hits = found.hits as { text: string; similarity: number; kind: string }[];
    expect(hits[0]?.text).toBe('The car is parked in lot B');
    expect(hits.map((h) => h.similarity)).toEqual([...hits.map((h) => h.similarity)].sort((a, b) => b - a));

    const scoped = await call(s, 'search_memory', { query: 'vehicle', scope: 'project:demo', top_k: 1 });
    expect(scoped.hits).toEqual([expect.objectContaining({ text: 'A sedan for the project demo is booked', scope: 'project:demo' })]);

    const current = await call(s, 'search_memory', { query: 'physician' });
    const facts = (current.hits as { kind: string; text: string; status?: string }[]).filter((h) => h.kind === 'fact');
    expect(facts.map((f) => [f.text, f.status])).toEqual([['family doctor · is → Dr. Lima', 'current']]);
    const withHistory = await call(s, 'search_memory', { query: 'physician', include_history: true });
    expect((withHistory.hits as { kind: string; status?: string }[]).filter((h) => h.kind === 'fact').map((f) => f.status).sort()).toEqual(['current', 'historical']);

    // Vectors are kept: a repeated search embeds only its query.
    const before = standIn.requests.length;
    await call(s, 'search_memory', { query: 'car' });
    expect(standIn.requests.length - before).toBe(1);
    expect(standIn.requests.every((r) => r.url === '/v1/embeddings' && r.auth === 'Bearer k-123')).toBe(true);
    s.store.close();
  });

  it('says semantic is off, and why, when the endpoint fails; index_memory reports the error', async () => {
    const s = await openServices({ home: tempHome('semantic'), wasmPath: WASM_PATH, now: () => T0 }, { embeddings: { url: `${standIn.url}/v1`, model: 'stand-in' } });
    await call(s, 'remember', { statement: 'a note to embed' });
    standIn.failing = true;
    try {
      const r = await call(s, 'search_memory', { query: 'note' });
      expect(r).toMatchObject({ ok: true, semantic: false, hits: [], reason: expect.stringContaining('HTTP 503') });
      expect(await call(s, 'memory_status', {})).toMatchObject({ semantic: false, semantic_reason: expect.stringContaining('HTTP 503') });
      expect(await call(s, 'index_memory', {})).toMatchObject({ ok: true, embeddings: { embedded: 0, remaining: 1, error: expect.stringContaining('HTTP 503') } });
    } finally {
      standIn.failing = false;
    }
    expect(await call(s, 'index_memory', {})).toMatchObject({ embeddings: { embedded: 1, remaining: 0 } });
    s.store.close();
  });

  it('refuses out-of-range arguments', async () => {
    const s = await openServices({ home: tempHome('semantic'), wasmPath: WASM_PATH }, { embeddings: { missing: 'off' } });
    expect(await call(s, 'search_memory', { query: '' })).toMatchObject({ ok: false });
    expect(await call(s, 'search_memory', { query: 'x'.repeat(501) })).toMatchObject({ ok: false, budget: { limit: 500, used: 501 } });
    expect(await call(s, 'search_memory', { query: 'x', top_k: 0 })).toMatchObject({ ok: false });
    expect(await call(s, 'search_memory', { query: 'x', top_k: 51 })).toMatchObject({ ok: false });
    expect(await call(s, 'search_memory', { query: 'x', scope: 'nope' })).toMatchObject({ ok: false });
    s.store.close();
  });
});
