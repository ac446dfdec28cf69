import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTemp, tempHome } from './helpers/tempStore';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-01T10:00:00Z');

function write(home: string, rel: string, content: string): void {
  const file = path.join(home, 'vault', ...rel.split('/'));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

describe('lookup_entity', () => {
  it('matches names, aliases and note paths, never words inside note text', async () => {
    const home = tempHome('entity');
    let clock = T0;
    const s = await openTemp(home, () => clock);
    await call(s, 'save_memory', { subject: 'Ana Souza', predicate: 'role', object: 'release manager' });
    clock += 1000;
    await call(s, 'save_memory', { subject: 'Ana Souza', predicate: 'aka', object: 'Aninha' });
    await call(s, 'save_memory', { subject: 'Kestrel', predicate: 'is', object: 'the staging cluster', scope: 'project:web' });
    write(home, 'people/bruno-lima.md', '---\naliases: [Bruno L.]\n---\n# Bruno Lima\n\nWorks with Ana Souza on payments. Mentions Zephyr here.\n');
    write(home, 'projects/web/runbooks/kestrel-restart.md', '# Restarting\n\nSteps.\n');
    await call(s, 'index_memory', {});

    const byName = await call(s, 'lookup_entity', { name: 'ana souza' });
    expect(byName.entities).toEqual([
      expect.objectContaining({ name: 'Ana Souza', match: 'name', aliases: ['Aninha'], facts: expect.arrayContaining([expect.objectContaining({ predicate: 'role', object: 'release manager' })]) }),
    ]);
    expect(await call(s, 'lookup_entity', { name: 'Aninha' })).toMatchObject({ entities: [expect.objectContaining({ name: 'Ana Souza', match: 'alias' })] });
    expect(await call(s, 'lookup_entity', { name: 'Bruno L.' })).toMatchObject({ entities: [expect.objectContaining({ name: 'Bruno Lima', match: 'alias', notes: [{ id: 'note:people/bruno-lima.md', title: 'Bruno Lima', scope: 'global' }] })] });
    expect(await call(s, 'lookup_entity', { name: 'bruno lima' })).toMatchObject({ entities: [expect.objectContaining({ match: 'name' })] });
    const byPath = await call(s, 'lookup_entity', { name: 'kestrel' });
    expect((byPath.entities as { name: string; match: string }[]).map((e) => [e.name, e.match])).toEqual([
      ['Kestrel', 'name'],
      ['Restarting', 'path'],
    ]);
    // "Zephyr" and "payments" are only inside a note's text: not an entity.
    expect(await call(s, 'lookup_entity', { name: 'Zephyr' })).toMatchObject({ entities: [], count: 0, note: expect.stringContaining('not words inside notes') });
    expect(await call(s, 'lookup_entity', { name: 'payments' })).toMatchObject({ count: 0 });
    expect((await call(s, 'lookup_entity', { name: 'kestrel', scope: 'global' })).count).toBe(0);
    expect(await call(s, 'lookup_entity', { name: '' })).toMatchObject({ ok: false });
    expect(await call(s, 'lookup_entity', { name: 'x'.repeat(201) })).toMatchObject({ ok: false, budget: { limit: 200, used: 201 } });
    expect(await call(s, 'lookup_entity', { name: 'x', scope: 'everything' })).toMatchObject({ ok: false });
    s.store.close();
  });
});

describe('memory_map and read_memory', () => {
  it('maps memories, entities, topics, facts with history and retired items, with limits and queries', async () => {
    const home = tempHome('map');
    let clock = T0;
    const s = await openTemp(home, () => clock);
    for (let i = 0; i < 25; i++) {
      clock += 1000;
      await call(s, 'remember', { statement: `entry number ${i} about #ops work` });
    }
    await call(s, 'save_memory', { subject: 'ci', predicate: 'runs on', object: 'GitHub Actions' });
    clock += 1000;
    await call(s, 'save_memory', { subject: 'ci', predicate: 'runs on', object: 'Buildkite', scope: 'global', cites: ['note:infra/ci.md'] });
    write(home, 'infra/ci.md', '---\ntags: [infra]\n---\n# CI\n\nPipelines and caches.\n');
    await call(s, 'index_memory', {});
    const gone = await call(s, 'remember', { statement: 'a mistaken entry to forget' });
    await call(s, 'retire_memory', { id: gone.id });

    const map = await call(s, 'memory_map', {});
    expect(map).toMatchObject({ ok: true, limit: 20 });
    const memories = map.memories as { items: { id: string }[]; total: number };
    expect(memories.items).toHaveLength(20);
    expect(memories.total).toBe(26);
    expect(map.entities).toMatchObject({ items: [expect.objectContaining({ name: 'ci', facts: 2, current_facts: 1 })], total: 1 });
    expect((map.topics as { items: { topic: string; kind: string }[] }).items).toEqual(
      expect.arrayContaining([expect.objectContaining({ topic: 'ops', kind: 'tag' }), expect.objectContaining({ topic: 'infra', kind: 'tag' }), expect.objectContaining({ topic: 'infra', kind: 'folder' })]),
    );
    const ci = (map.facts as { items: { subject: string; values: { object: string; status: string; valid_to: string | null }[] }[] }).items[0];
    expect(ci?.values.map((v) => [v.object, v.status])).toEqual([
      ['Buildkite', 'current'],
      ['GitHub Actions', 'historical'],
    ]);
    expect(ci?.values[1]?.valid_to).toBe(new Date(T0 + 26_000).toISOString());
    expect(map.retired).toMatchObject({ items: [expect.objectContaining({ id: gone.id, kind: 'entry' })], total: 1 });

    const small = await call(s, 'memory_map', { limit: 3 });
    expect((small.memories as { items: unknown[] }).items).toHaveLength(3);
    const queried = await call(s, 'memory_map', { query: 'pipelines' });
    expect(queried).toMatchObject({ limit: 10, memories: { items: [expect.objectContaining({ id: 'note:infra/ci.md', kind: 'note' })], total: 1 } });
    const byWord = await call(s, 'memory_map', { query: 'number', scope: 'global' });
    expect((byWord.memories as { items: unknown[]; total: number }).total).toBe(25);
    expect((byWord.memories as { items: unknown[] }).items).toHaveLength(10);

    expect(await call(s, 'memory_map', { scope: 'global' })).toMatchObject({ ok: false, reason: expect.stringContaining('query') });
    expect(await call(s, 'memory_map', { limit: 0 })).toMatchObject({ ok: false });
    expect(await call(s, 'memory_map', { limit: 201 })).toMatchObject({ ok: false });
    expect(await call(s, 'memory_map', { query: 'x'.repeat(501) })).toMatchObject({ ok: false, budget: { limit: 500 } });

    // read_memory: a note with the facts that cite it, a fact with its whole history.
    const note = await call(s, 'read_memory', { id: 'note:infra/ci.md' });
    expect(note).toMatchObject({ kind: 'note', title: 'CI', tags: ['infra'], facts: [expect.objectContaining({ object: 'Buildkite', status: 'current' })], stale: false });
    const factId = ci?.values[1] as unknown as { id: string };
    const fact = await call(s, 'read_memory', { id: factId.id });
    expect(fact).toMatchObject({ kind: 'fact', object: 'GitHub Actions', status: 'historical', history: [expect.objectContaining({ object: 'Buildkite' }), expect.objectContaining({ object: 'GitHub Actions' })] });
    const day = await call(s, 'read_memory', { id: 'note:daily/2026-11-01.md' });
    expect((day.entries as unknown[]).length).toBe(25);
    expect(String((await call(s, 'read_memory', { id: 'memo:1' })).reason)).toContain('not a memory id');
    expect(String((await call(s, 'read_memory', { id: 'note:nothing.md' })).reason)).toContain('no note');
    expect(String((await call(s, 'read_memory', { id: 'note:/etc/passwd' })).reason)).toContain('forward slashes');
    expect(await call(s, 'read_memory', {})).toMatchObject({ ok: false });
    s.store.close();
  });
});

describe('search_history', () => {
  it('is not configured until a promoted-history folder exists', async () => {
    const s = await openTemp(tempHome('history'), () => T0);
    const r = await call(s, 'search_history', { query: 'deploy' });
    expect(r).toMatchObject({ ok: true, configured: false, results: [], reason: expect.stringContaining('history') });
    s.store.close();
  });

  it('answers lexical searches over promoted notes as citations with provenance, deterministically', async () => {
    const home = tempHome('history');
    const s = await openTemp(home, () => T0);
    write(home, 'history/2026-10-12-deploy-session.md', '---\nsource: claude-code\nsession_date: 2026-10-12\n---\n# Deploy session\n\nWe rolled back the deploy because the migration locked the users table.\n\nNext time run the migration first.\n');
    write(home, 'history/2026-10-20-cache.md', '# Cache session\n\nThe cache warmer ran before the deploy finished.\n');
    write(home, 'notes/not-history.md', '# Not history\n\nThe deploy and the migration, in an ordinary note.\n');
    await call(s, 'index_memory', {});

    const r = await call(s, 'search_history', { query: 'migration deploy' });
    expect(r).toMatchObject({ ok: true, configured: true, folders: ['history'], match: 'all' });
    const results = r.results as { id: string; lines: { from: number; to: number }; provenance: { source: string | null; date: string | null; file: string } }[];
    expect(results.map((x) => x.id)).toEqual(['note:history/2026-10-12-deploy-session.md']);
    expect(results[0]?.provenance).toMatchObject({ source: 'claude-code', date: '2026-10-12T00:00:00.000Z', file: path.join(home, 'vault', 'history', '2026-10-12-deploy-session.md') });
    expect(results[0]?.lines.from).toBe(1);
    // Promoted history never shows up in get_context's recall, and ordinary notes never in search_history.
    expect(((await call(s, 'get_context', { query: 'rolled back users table' })).notes as unknown[]).length).toBe(0);

    const any = await call(s, 'search_history', { query: 'warmer rollback' });
    expect(any).toMatchObject({ match: 'any', results: [expect.objectContaining({ id: 'note:history/2026-10-20-cache.md' })] });
    const again = await call(s, 'search_history', { query: 'deploy', limit: 1 });
    expect((again.results as unknown[]).length).toBe(1);
    expect(await call(s, 'search_history', { query: 'deploy', limit: 1 })).toEqual(again);
    expect(await call(s, 'search_history', { query: 'x', limit: 21 })).toMatchObject({ ok: false });
    expect(await call(s, 'search_history', { query: 'x'.repeat(201) })).toMatchObject({ ok: false, budget: { limit: 200 } });
    s.store.close();
  });
});
