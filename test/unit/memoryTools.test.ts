import { describe, expect, it } from 'vitest';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool, TOOLS } from '../../src/core/tools/registry';
import type { Services } from '../../src/core/services';
import { openTemp } from './helpers/tempStore';

async function call(services: Services, name: string, input: unknown): Promise<Record<string, unknown>> {
  const tool = findTool(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return (await invokeTool(tool, input, services, { client: 'vitest' })) as Record<string, unknown>;
}

describe('memory tools on a real store', () => {
  it('remember with a fact replaces the value and keeps the old one in history', async () => {
    let clock = Date.parse('2026-11-01T10:00:00Z');
    const s = await openTemp(undefined, () => clock);
    const first = await call(s, 'remember', { statement: 'We build with Vite 8', subject: 'Build Tool', predicate: 'is', object: 'Vite 8' });
    expect(first).toMatchObject({ ok: true, saved: 'fact', replaced: null, source: 'vitest' });
    clock += 3_600_000;
    const second = await call(s, 'save_memory', { subject: 'build  tool', predicate: 'IS', object: 'Vite 9' });
    expect(second).toMatchObject({ ok: true, replaced: { id: first.id, object: 'Vite 8' } });

    const current = await call(s, 'retrieve_memory', { subject: 'build tool' });
    expect(current.values).toEqual([expect.objectContaining({ object: 'Vite 9', status: 'current' })]);
    const history = await call(s, 'retrieve_memory', { subject: 'build tool', include_history: true });
    expect((history.values as { object: string; status: string }[]).map((v) => [v.object, v.status])).toEqual([
      ['Vite 9', 'current'],
      ['Vite 8', 'historical'],
    ]);
    const past = await call(s, 'retrieve_memory', { subject: 'build tool', as_of: '2026-11-01T10:30:00Z' });
    expect(past.values).toEqual([expect.objectContaining({ object: 'Vite 8', status: 'current' })]);
    const before = await call(s, 'retrieve_memory', { subject: 'build tool', as_of: '2026-10-01T00:00:00Z' });
    expect(before.values).toEqual([]);
    s.store.close();
  });

  it('refuses a statement over 4,000 characters with measured numbers and writes nothing', async () => {
    const s = await openTemp();
    const r = await call(s, 'remember', { statement: 'x'.repeat(4001) });
    expect(r).toMatchObject({ ok: false, budget: { limit: 4000, used: 4001, unit: 'characters' } });
    expect(String(r.reason)).toContain('4001');
    expect((await call(s, 'memory_status', {})).entries).toBe(0);
    s.store.close();
  });

  it('refuses control characters in a statement saved alone, escapes them beside a fact', async () => {
    const s = await openTemp();
    const bad = await call(s, 'remember', { statement: 'bell\u0007here' });
    expect(bad).toMatchObject({ ok: false });
    expect(String(bad.reason)).toContain('U+0007');
    const lone = await call(s, 'remember', { statement: 'half \ud800 pair' });
    expect(String(lone.reason)).toContain('not valid Unicode');
    expect((await call(s, 'memory_status', {})).entries).toBe(0);

    const ok = await call(s, 'remember', { statement: 'bell\u0007here', subject: 'bell', predicate: 'is', object: 'here' });
    expect(ok).toMatchObject({ ok: true });
    const refusedFact = await call(s, 'save_memory', { subject: 'a\u0001', predicate: 'is', object: 'b' });
    expect(refusedFact).toMatchObject({ ok: false });
    const found = await call(s, 'search_text', { query: 'bell' });
    const texts = (found.hits as { text: string }[]).map((h) => h.text);
    expect(texts).toContain('bell\\u0007here');
    s.store.close();
  });

  it('needs subject, predicate and object all together', async () => {
    const s = await openTemp();
    const r = await call(s, 'remember', { statement: 'half a fact', subject: 'x', predicate: 'y' });
    expect(r).toMatchObject({ ok: false });
    expect(String(r.reason)).toContain('2 of 3');
    s.store.close();
  });

  it('search_text finds notes and current facts by BM25, respects scope and top_k, and ignores FTS operators', async () => {
    const s = await openTemp();
    await call(s, 'remember', { statement: 'Deploys go through the staging cluster first', scope: 'project:web' });
    await call(s, 'remember', { statement: 'The staging cluster is called kestrel' });
    await call(s, 'save_memory', { subject: 'database', predicate: 'engine', object: 'PostgreSQL 16' });
    const all = await call(s, 'search_text', { query: 'staging cluster' });
    expect(all.total).toBe(2);
    const scoped = await call(s, 'search_text', { query: 'staging', scope: 'project:web' });
    expect((scoped.hits as { text: string }[]).map((h) => h.text)).toEqual(['Deploys go through the staging cluster first']);
    const fact = await call(s, 'search_text', { query: 'postgresql' });
    expect(fact.hits).toEqual([expect.objectContaining({ kind: 'fact', id: expect.stringMatching(/^fact:/) })]);
    const injected = await call(s, 'search_text', { query: 'staging OR NEAR(kestrel) -cluster "' });
    expect(injected.ok).toBe(true);
    const limited = await call(s, 'search_text', { query: 'staging', top_k: 1 });
    expect(limited).toMatchObject({ shown: 1, total: 2 });
    expect(await call(s, 'search_text', { query: '!!!' })).toMatchObject({ ok: false });
    s.store.close();
  });

  it('refuses unknown arguments and a bad scope', async () => {
    const s = await openTemp();
    expect(await call(s, 'retrieve_memory', { subjet: 'x' })).toMatchObject({ ok: false });
    expect(await call(s, 'remember', { statement: 'x', scope: 'team' })).toMatchObject({ ok: false });
    s.store.close();
  });

  it('every tool has a description and an object input schema', () => {
    for (const t of TOOLS) {
      expect(t.description.length).toBeGreaterThan(40);
    }
  });
});
