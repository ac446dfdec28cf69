import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledModel, LOCAL_MODEL } from '../../src/core/memory/semantic/localModel';
import type { IndexProgress } from '../../src/core/memory/semantic/semanticService';
import { openServices, type Services } from '../../src/core/services';
import { queryScalar } from '../../src/core/store/sqlite';
import { transcriptFixtures } from './helpers/fixtures';
import { connectMcp } from './helpers/mcpClient';
import { callTool as call } from './helpers/memoryCall';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const ROOT = path.resolve(__dirname, '../..');
const DIST = path.join(ROOT, 'dist');
const CLI = path.join(DIST, 'cli.js');
const BLOCK = path.join(__dirname, 'helpers/blockNetwork.cjs');
const T0 = Date.parse('2026-11-01T10:00:00Z');

const open: Services[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.store.close();
});

async function openLocal(home: string, background = false): Promise<Services> {
  const s = await openServices({ home, wasmPath: WASM_PATH, now: () => T0 }, { embeddings: bundledModel(DIST), semanticBackground: background });
  open.push(s);
  return s;
}

const NOTES = [
  'The car is parked in level 3 of the garage on Elm Street',
  'Lunch with the design team is at noon on Fridays',
  'The staging database password rotates every 90 days',
  'Our cat Miso needs her vaccination appointment in March',
];

describe('semantic recall with the bundled model', () => {
  it('finds memories by meaning with no set-up, and memory_status names the model and how far indexing got', async () => {
    const s = await openLocal(tempHome('semantic-local'));
    for (const statement of NOTES) await call(s, 'remember', { statement });
    const before = await call(s, 'memory_status', {});
    expect(before).toMatchObject({ semantic: true, semantic_reason: null, embeddings: { provider: 'local', model: LOCAL_MODEL, memory: { total: 4 } } });

    const r = await call(s, 'search_memory', { query: 'where did I leave my automobile?' });
    expect(r).toMatchObject({ ok: true, semantic: true, model: LOCAL_MODEL });
    const hits = r.hits as { text: string; similarity: number }[];
    expect(hits[0]?.text).toContain('car is parked');
    expect(hits[0]!.similarity).toBeGreaterThan(hits[1]!.similarity);
    const pet = await call(s, 'search_memory', { query: 'when is the kitten due at the vet', top_k: 1 });
    expect((pet.hits as { text: string }[])[0]?.text).toContain('Miso');

    expect(await call(s, 'memory_status', {})).toMatchObject({ embeddings: { indexed: 4, total: 4, not_embedded: 0, memory: { indexed: 4, total: 4 }, indexing: false } });
  });

  it('keeps vectors durably: a reopened store has every memory indexed before the model is ever asked', async () => {
    const home = tempHome('semantic-durable');
    const s = await openLocal(home);
    for (const statement of NOTES) await call(s, 'remember', { statement });
    expect(await s.semantic.indexAll()).toMatchObject({ remaining: 0 });
    const rows = Number(queryScalar(s.store.db, 'SELECT count(*) FROM embeddings'));
    s.store.close();
    open.splice(0);

    // A model that cannot start: if the reopened store needed any vector recomputed, it would say so.
    const broken = { local: { ...bundledModel(DIST).local, workerPath: path.join(home, 'no-worker.js') } };
    const again = await openServices({ home, wasmPath: WASM_PATH, now: () => T0 }, { embeddings: broken, semanticBackground: false });
    open.push(again);
    expect(Number(queryScalar(again.store.db, 'SELECT count(*) FROM embeddings'))).toBe(rows);
    expect(again.semantic.progress()).toMatchObject({ indexed: 4, total: 4, memory: { indexed: 4, total: 4 } });
    expect(await again.semantic.backfill(100)).toEqual({ embedded: 0, remaining: 0 });
  });

  it('indexes in the background as memories are written, reporting progress, without a search asking', async () => {
    const s = await openLocal(tempHome('semantic-background'));
    const seen: IndexProgress[] = [];
    s.semantic.onProgress((p) => seen.push(p));
    s.semantic.startBackground(50);
    for (const statement of NOTES) await call(s, 'remember', { statement });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && s.semantic.progress()?.indexed !== 4) await new Promise((r) => setTimeout(r, 100));
    await s.semantic.idle();
    expect(s.semantic.progress()).toMatchObject({ indexed: 4, total: 4, indexing: false });
    expect(seen.some((p) => p.indexing)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ indexing: false, indexed: 4 });
    const nearest = await s.semantic.nearest('feline health checkup', { corpus: 'memory', k: 2 });
    expect(nearest.ok && nearest.hits[0]?.key.startsWith('entry:')).toBe(true);
    expect(nearest.ok && typeof nearest.hits[0]?.docid).toBe('number');
  });

  it('recollect mcp indexes what it is told to remember in the background, and the vectors serve the next process', async () => {
    const home = tempHome('semantic-mcp');
    const mcp = await connectMcp(home, 'vitest-agent', { env: { RECOLLECT_EMBEDDINGS_URL: '' } });
    try {
      for (const statement of NOTES) expect(await mcp.call('remember', { statement })).toMatchObject({ ok: true });
      let status: Record<string, unknown> = {};
      const deadline = Date.now() + 90_000;
      do {
        await new Promise((r) => setTimeout(r, 250));
        status = await mcp.call('memory_status', {});
      } while (Date.now() < deadline && (status.embeddings as { indexed?: number } | undefined)?.indexed !== 4);
      expect(status).toMatchObject({ semantic: true, embeddings: { provider: 'local', model: LOCAL_MODEL, indexed: 4, total: 4 } });
    } finally {
      await mcp.close();
    }
    // Another process finds all four indexed: the server stored them, nothing is recomputed.
    const s = await openLocal(home);
    expect(s.semantic.progress()).toMatchObject({ indexed: 4, total: 4 });
  });

  it('chat_history match=semantic finds imported messages by meaning, bounded by time_range', async () => {
    const s = await openLocal(tempHome('semantic-history'));
    await s.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
    const done = await s.semantic.indexAll();
    expect(done.remaining).toBe(0);
    const progress = s.semantic.progress() as IndexProgress;
    expect(progress.history.total).toBeGreaterThan(0);
    expect(progress.history.indexed).toBe(progress.history.total);

    const r = await call(s, 'chat_history', { mode: 'search', match: 'semantic', query: 'a test is failing', limit: 5 });
    expect(r).toMatchObject({ ok: true, match: 'semantic', semantic: true, model: LOCAL_MODEL });
    const hits = r.hits as { task_id: string; kind: string; similarity: number }[];
    expect(hits.length).toBe(5);
    expect(hits.every((h) => h.task_id && (h.kind === 'user' || h.kind === 'assistant'))).toBe(true);
    expect(hits.map((h) => h.similarity)).toEqual([...hits.map((h) => h.similarity)].sort((a, b) => b - a));
    const none = await call(s, 'chat_history', { mode: 'search', match: 'semantic', query: 'a test is failing', time_range: '2001-01-01T00:00:00Z..2001-01-02T00:00:00Z' });
    expect(none).toMatchObject({ ok: true, semantic: true, hits: [] });
  });
});

/** Whether this machine lets us put a process in a network namespace of its own (root, util-linux). */
function canUnshare(): boolean {
  return spawnSync('unshare', ['-n', 'true']).status === 0;
}

describe('the bundled model offline', () => {
  it('loads from the installed package and answers with the network unreachable', async () => {
    // A server on this machine's loopback: a process that can reach any network reaches this one.
    let contacted = 0;
    const server = http.createServer((_req, res) => res.end('ok'));
    server.on('connection', () => contacted++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const home = tempHome('semantic-offline');
    const logFile = path.join(home, 'network-attempts.log');
    const isolated = canUnshare();
    // In a namespace of its own the child has no network at all; elsewhere every network call it or its worker threads make throws.
    const run = (args: string[]) => {
      const node = [process.execPath, '-r', BLOCK, ...args];
      const [cmd, ...rest] = isolated ? ['unshare', '-n', '--', ...node] : node;
      return spawnSync(cmd as string, rest, { env: { ...process.env, RECOLLECT_HOME: home, BLOCK_NETWORK_LOG: logFile, RECOLLECT_EMBEDDINGS_URL: '' }, encoding: 'utf8', timeout: 120_000 });
    };
    try {
      // The proof that the child cannot reach the network: it cannot even reach the server above.
      const probe = spawnSync(isolated ? 'unshare' : process.execPath, [
        ...(isolated ? ['-n', '--', process.execPath] : ['-r', BLOCK]),
        '-e',
        `fetch('http://127.0.0.1:${port}/').then(() => console.log('reached'), (e) => console.log('unreachable', e.cause?.code ?? e.message))`,
      ], { encoding: 'utf8', env: { ...process.env, BLOCK_NETWORK_LOG: '' } });
      expect(probe.stdout).toMatch(/^unreachable/);
      expect(contacted).toBe(0);

      for (const statement of NOTES) expect(run([CLI, 'tool', 'remember', JSON.stringify({ statement })]).status).toBe(0);
      const found = run([CLI, 'tool', 'search_memory', JSON.stringify({ query: 'where is my vehicle parked', top_k: 2 })]);
      expect(found.stderr).toBe('');
      const answer = JSON.parse(found.stdout) as { semantic: boolean; model: string; hits: { text: string }[] };
      expect(answer).toMatchObject({ semantic: true, model: LOCAL_MODEL });
      expect(answer.hits[0]?.text).toContain('car is parked');
      // Nothing so much as tried to reach the network.
      expect(fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '').toBe('');
      expect(contacted).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
