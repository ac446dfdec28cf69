import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/core/text/tokens';
import { getContextTool } from '../../src/core/tools/getContext';
import { connectMcp } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-01T10:00:00Z');

/** A small deterministic generator, so a failing case can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  return { next, int: (a: number, b: number) => a + Math.floor(next() * (b - a + 1)), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T };
}

const WORDS = (
  'deploy staging cluster kestrel database migration postgres release friday approval review login session token cache ' +
  'queue worker retry backoff pipeline ingestion schema index search vector budget latency metrics dashboard alert oncall ' +
  'frontend preact vite bundle build webpack rolldown test vitest coverage flaky timeout network proxy certificate renewal ' +
  'ünïcode 日本語 emoji 🚀 naïve café'
).split(' ');

describe('get_context', () => {
  it('never exceeds max_tokens over many queries and budgets, and reports exactly what it used', async () => {
    const home = tempHome('context');
    let clock = T0;
    const s = await openTemp(home, () => clock);
    const r = rng(7);
    const text = (min: number, max: number) => Array.from({ length: r.int(min, max) }, () => r.pick(WORDS)).join(' ');
    for (let i = 0; i < 120; i++) {
      clock += 60_000;
      const scope = r.pick(['global', 'global', 'project:web']);
      // Straight to the service: the tool path is exercised elsewhere.
      await s.memory.saveFact({ subject: `${r.pick(WORDS)} ${r.pick(WORDS)}`, predicate: r.pick(['is', 'uses', 'rule', 'owner']), object: text(1, 30), scope }, 'vitest');
      await s.memory.remember({ statement: text(3, i % 10 === 0 ? 700 : 60), scope }, 'vitest');
    }
    fs.mkdirSync(path.join(home, 'vault', 'design'), { recursive: true });
    for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(home, 'vault', 'design', `note-${i}.md`), `# Note ${i}\n\n${Array.from({ length: 8 }, () => text(40, 120)).join('\n\n')}\n`);
    await call(s, 'index_memory', {});

    let fullReplies = 0;
    for (let i = 0; i < 200; i++) {
      const input: Record<string, unknown> = { max_tokens: r.next() < 0.2 ? r.pick([128, 129, 4000]) : r.int(128, 4000) };
      if (r.next() < 0.9) input.query = r.next() < 0.1 ? 'can I deploy on friday?' : text(1, 12);
      if (r.next() < 0.3) input.include_history = true;
      if (r.next() < 0.2) input.scope = r.pick(['global', 'project:web']);
      // The tool's own schema, then its handler: the path every surface takes, minus the activity log.
      const reply = (await s.recall.getContext(getContextTool.input.parse(input))) as Record<string, unknown>;
      expect(reply.ok, JSON.stringify(input)).toBe(true);
      const measured = countTokens(JSON.stringify(reply));
      const budget = reply.budget as { requested: number; used: number; remaining: number };
      expect(measured, JSON.stringify(input)).toBeLessThanOrEqual(input.max_tokens as number);
      expect(budget).toEqual({ requested: input.max_tokens, used: measured, remaining: (input.max_tokens as number) - measured });
      const leftOut = reply.left_out as { facts: number; notes: number };
      if (leftOut.facts + leftOut.notes > 0) fullReplies++;
    }
    // The property is only worth something if budgets were actually reached.
    expect(fullReplies).toBeGreaterThan(50);
    s.store.close();
  });

  it('puts standing rules first when the request asks whether something may be done', async () => {
    let clock = T0;
    const s = await openTemp(undefined, () => clock);
    const tick = () => (clock += 60_000);
    await call(s, 'save_memory', { subject: 'production deploys', predicate: 'rule', object: 'never on Friday; ask Ana first', scope: 'project:web' });
    tick();
    await call(s, 'save_memory', { subject: 'database migrations', predicate: 'approval', object: 'need a second reviewer', scope: 'project:web' });
    tick();
    await call(s, 'save_memory', { subject: 'deploy tool', predicate: 'is', object: 'Argo CD on Friday builds', scope: 'project:web' });
    tick();
    await call(s, 'remember', { statement: 'Friday deploy went fine last week', scope: 'project:web' });

    const asked = await call(s, 'get_context', { query: 'Can I deploy to production on Friday?', scope: 'project:web' });
    expect(asked.rules_first).toBe(true);
    const facts = asked.facts as { predicate: string; subject: string }[];
    expect(facts.slice(0, 2).map((f) => f.predicate)).toEqual(['rule', 'approval']);
    expect(facts[0]?.subject).toBe('production deploys'); // shares the request's words, so it leads the rules
    expect(facts.map((f) => f.subject)).toContain('deploy tool');
    expect((asked.notes as { text: string }[])[0]?.text).toBe('Friday deploy went fine last week');

    // Not a permission question: facts by relevance, no rules_first, the unrelated rule stays out.
    const plain = await call(s, 'get_context', { query: 'which deploy tool', scope: 'project:web' });
    expect(plain.rules_first).toBeUndefined();
    expect((plain.facts as { subject: string }[]).map((f) => f.subject)).not.toContain('database migrations');
    s.store.close();
  });

  it('labels superseded values historical with include_history, each with when it was true and when recorded', async () => {
    let clock = T0;
    const s = await openTemp(undefined, () => clock);
    await call(s, 'save_memory', { subject: 'build tool', predicate: 'is', object: 'webpack 5' });
    clock += 3_600_000;
    await call(s, 'save_memory', { subject: 'build tool', predicate: 'is', object: 'vite 8' });
    const current = await call(s, 'get_context', { query: 'build tool' });
    expect(current.facts).toEqual([expect.objectContaining({ object: 'vite 8', status: 'current', valid_from: '2026-11-01T11:00:00.000Z', recorded_at: '2026-11-01T11:00:00.000Z' })]);
    const withHistory = await call(s, 'get_context', { query: 'build tool', include_history: true });
    expect(withHistory.facts).toEqual([
      expect.objectContaining({ object: 'vite 8', status: 'current' }),
      expect.objectContaining({ object: 'webpack 5', status: 'historical', valid_from: '2026-11-01T10:00:00.000Z', valid_to: '2026-11-01T11:00:00.000Z' }),
    ]);
    s.store.close();
  });

  it('without a query answers a compact profile: rules, then current facts and notes newest first', async () => {
    let clock = T0;
    const s = await openTemp(undefined, () => clock);
    await call(s, 'remember', { statement: 'an older note' });
    clock += 1000;
    await call(s, 'save_memory', { subject: 'editor', predicate: 'is', object: 'VS Code' });
    clock += 1000;
    await call(s, 'save_memory', { subject: 'pushes to main', predicate: 'policy', object: 'only through pull requests' });
    clock += 1000;
    await call(s, 'remember', { statement: 'the newest note' });
    const profile = await call(s, 'get_context', {});
    expect(profile.mode).toBe('profile');
    expect((profile.facts as { predicate: string }[]).map((f) => f.predicate)).toEqual(['policy', 'is']);
    expect((profile.notes as { text: string }[]).map((n) => n.text)).toEqual(['the newest note', 'an older note']);
    // Only function words: the profile, and it says why.
    expect(await call(s, 'get_context', { query: 'what is it?' })).toMatchObject({ mode: 'profile', note: expect.stringContaining('no searchable words') });
    s.store.close();
  });

  it('cuts a note that does not fit whole, marks it, and says how big it is', async () => {
    const s = await openTemp(undefined, () => T0);
    const long = Array.from({ length: 400 }, (_, i) => `kestrel line ${i} of a very long runbook entry`).join('. ');
    await call(s, 'remember', { statement: long.slice(0, 4000) });
    const reply = await call(s, 'get_context', { query: 'kestrel runbook', max_tokens: 300 });
    const notes = reply.notes as { text: string; truncated?: boolean; full_tokens?: number }[];
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ truncated: true, full_tokens: countTokens(long.slice(0, 4000)) });
    expect(notes[0]?.text.endsWith('…')).toBe(true);
    expect(countTokens(JSON.stringify(reply))).toBeLessThanOrEqual(300);
    s.store.close();
  });

  it('refuses what the spec refuses, with measured numbers, and writes nothing', async () => {
    const s = await openTemp(undefined, () => T0);
    expect(await call(s, 'get_context', { max_tokens: 127 })).toMatchObject({ ok: false });
    expect(await call(s, 'get_context', { max_tokens: 4001 })).toMatchObject({ ok: false, budget: { limit: 4000, used: 4001 } });
    expect(await call(s, 'get_context', { max_tokens: 800.5 })).toMatchObject({ ok: false });
    expect(await call(s, 'get_context', { query: 'x'.repeat(1001) })).toMatchObject({ ok: false, budget: { limit: 1000, used: 1001, unit: 'characters' } });
    expect(await call(s, 'get_context', { query: '' })).toMatchObject({ ok: false });
    expect(await call(s, 'get_context', { scope: 'team' })).toMatchObject({ ok: false, reason: expect.stringContaining('scope') });
    expect(await call(s, 'get_context', { include_history: 'yes' })).toMatchObject({ ok: false });
    expect(await call(s, 'get_context', { question: 'x' })).toMatchObject({ ok: false });
    const def = await call(s, 'get_context', { query: 'anything' });
    expect(def.budget).toMatchObject({ requested: 800 });
    expect(await call(s, 'memory_status', {})).toMatchObject({ entries: 0, facts: 0 });
    s.store.close();
  });
  it('gives the byte-identical reply to the same request on an unchanged store, and follows a write by another process', async () => {
    // Pruning only starts past MATCH_BUDGET matching memories, so the store needs thousands:
    // they are written as journal lines and replayed on open, the path every process takes.
    const home = tempHome('context-repeat');
    const lines: string[] = [];
    const fact = (i: number, object: string) =>
      JSON.stringify({ op: 'memory.fact.saved', at: T0 + i * 1000, id: `f${String(i).padStart(6, '0')}`, subject: `service ${i}`, predicate: 'uses', object, scope: 'global', source: 'vitest', statement: null, cites: [] });
    // alpha: 10 memories, beta: 3,005 (past the budget), gamma: 2,985 (within it beside alpha).
    for (let i = 0; i < 10; i++) lines.push(fact(i, 'alpha kestrel'));
    for (let i = 10; i < 2_995; i++) lines.push(fact(i, 'beta gamma queue'));
    for (let i = 2_995; i < 3_015; i++) lines.push(fact(i, 'beta worker'));
    fs.writeFileSync(path.join(home, 'journal.jsonl'), `${lines.join('\n')}\n`);
    let clock = T0 + 3_600_000 * 24;
    const a = await openTemp(home, () => clock);
    const b = await openTemp(home, () => clock);
    // "zzzabsent" matches nothing: a word no memory holds must not unsettle the next reply.
    const pruned = getContextTool.input.parse({ query: 'alpha beta zzzabsent' });
    const first = JSON.stringify((await a.recall.getContext(pruned)));
    for (let i = 0; i < 3; i++) expect(JSON.stringify((await a.recall.getContext(pruned)))).toBe(first);
    // beta was left out of the search, so only alpha's ten memories were ranked.
    const firstFacts = (JSON.parse(first) as { facts: { object: string }[] }).facts;
    expect(firstFacts.length).toBeGreaterThan(0);
    expect(firstFacts.every((f) => f.object === 'alpha kestrel')).toBe(true);

    const edge = getContextTool.input.parse({ query: 'alpha gamma' });
    const before = JSON.stringify((await a.recall.getContext(edge)));
    // Another process pushes gamma past the budget: from now on only alpha is searched, in every process.
    for (let i = 0; i < 10; i++) {
      clock += 1000;
      await b.memory.saveFact({ subject: `worker ${i}`, predicate: 'uses', object: 'gamma' }, 'vitest');
    }
    const after = JSON.stringify((await a.recall.getContext(edge)));
    const fresh = await openTemp(home, () => clock);
    expect(after).toBe(JSON.stringify((await fresh.recall.getContext(edge))));
    expect(after).not.toBe(before);
    expect(JSON.stringify((await a.recall.getContext(edge)))).toBe(after);
    expect(JSON.stringify((await a.recall.getContext(pruned)))).toBe(JSON.stringify((await fresh.recall.getContext(pruned))));
    for (const s of [a, b, fresh]) s.store.close();
  });

  it('over the real MCP server, the text the client receives is the reply whose tokens were counted', async () => {
    const home = tempHome('context-mcp');
    const mcp = await connectMcp(home, 'budget-checker');
    try {
      for (let i = 0; i < 30; i++) await mcp.call('remember_note', { text: `kestrel deploy note ${i}: ${'the staging cluster restarts nightly and the queue drains first. '.repeat(8)}` });
      const res = await mcp.client.callTool({ name: 'get_context', arguments: { query: 'kestrel staging deploy', max_tokens: 300 } });
      const text = (res.content as { type: string; text: string }[])[0]?.text ?? '';
      const reply = JSON.parse(text) as { budget: { used: number }; notes: { id: string }[]; left_out: { notes: number } };
      expect(countTokens(text)).toBe(reply.budget.used);
      expect(reply.budget.used).toBeLessThanOrEqual(300);
      expect(reply.notes.length).toBeGreaterThan(0);
      expect(reply.left_out.notes).toBeGreaterThan(0);
      expect(reply.notes[0]?.id).toMatch(/^entry:daily\/\d{4}-\d{2}-\d{2}\.md#[0-9a-f]{12}$/);
    } finally {
      await mcp.close();
    }
  });
});
