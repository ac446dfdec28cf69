import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MachineIdentity } from '../../src/core/rules/machine';
import type { Services } from '../../src/core/services';
import { queryScalar } from '../../src/core/store/sqlite';
import { countTokens } from '../../src/core/text/tokens';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool, TOOLS } from '../../src/core/tools/registry';
import { connectMcp } from './helpers/mcpClient';
import { checkedCall } from './helpers/checkedCall';
import { openTemp, tempHome } from './helpers/tempStore';

type Json = Record<string, unknown>;
const PROJECT = '/work/demo';

async function call(s: Services, name: string, input: object): Promise<Json> {
  return checkedCall(s, name, input, { client: 'claude-code', workspace: PROJECT });
}

function ruleOps(s: Services): number {
  return (fs.readFileSync(path.join(s.store.home, 'journal.jsonl'), 'utf8').match(/"op":"rules\.proposed"/g) ?? []).length;
}

describe('chapters_rule_propose', () => {
  it('is write-once: the same words again (any case or spacing) change nothing and say where the rule stands', async () => {
    const s = await openTemp();
    const first = await call(s, 'chapters_rule_propose', { text: 'Run npm test before every commit.', category: 'testing', rationale: 'a broken main last week' });
    expect(first).toMatchObject({ ok: true, status: 'pending', duplicate: false });
    expect(String(first.text)).toContain('not in force');
    const again = await call(s, 'chapters_rule_propose', { text: '  run NPM test   before every commit. ', category: 'workflow' });
    expect(again).toMatchObject({ ok: true, id: first.id, duplicate: true, status: 'pending' });
    expect(String(again.text)).toContain('Nothing new was written');
    expect(ruleOps(s)).toBe(1);
    expect(Number(queryScalar(s.store.db, 'SELECT count(*) FROM rules'))).toBe(1);
    // A rejected rule stays rejected when proposed again.
    await s.rules.reject(String(first.id), s.rules.machine.current(), 'Ana', 'we use CI for that');
    const third = await call(s, 'chapters_rule_propose', { text: 'Run npm test before every commit.' });
    expect(third).toMatchObject({ duplicate: true, status: 'rejected' });
    expect(String(third.text)).toContain('rejected on this machine by Ana');
    expect(ruleOps(s)).toBe(1);
    s.store.close();
  });

  it('refuses bad input and writes nothing', async () => {
    const s = await openTemp();
    expect(await call(s, 'chapters_rule_propose', { text: 'x'.repeat(2001) })).toMatchObject({ ok: false, budget: { limit: 2000, used: 2001 } });
    expect(await call(s, 'chapters_rule_propose', { text: 'bell \u0007 rule' })).toMatchObject({ ok: false });
    expect(await call(s, 'chapters_rule_propose', { text: 'approve me', approved: true })).toMatchObject({ ok: false });
    expect(ruleOps(s)).toBe(0);
    s.store.close();
  });
});

describe('rules are in force only when a person approved them on this machine', () => {
  it('a proposed rule is not returned by chapters_rules until approved here; another machine does not count', async () => {
    const s = await openTemp();
    const proposed = await call(s, 'chapters_rule_propose', { text: 'Use pnpm, never npm, in this repository.', category: 'tooling' });
    const id = String(proposed.id);
    const before = await call(s, 'chapters_rules', { task: 'install the dependencies with pnpm' });
    expect(before).toMatchObject({ rules: [], shown: 0, active: { project: 0, session: 0 }, notInForce: { awaitingApproval: 1, rejected: 0 } });
    expect(before.withheld).toMatchObject({ count: 0, ids: [] });

    await s.rules.approve(id, 'some-other-machine', 'Bo');
    const elsewhere = await call(s, 'chapters_rules', { task: 'install the dependencies with pnpm' });
    expect(elsewhere.shown).toBe(0);
    expect(s.rules.view(id)).toMatchObject({ status: 'pending', approvedElsewhere: 1 });

    const approved = await s.rules.approve(id, s.rules.machine.current(), 'Ana');
    expect(approved).toMatchObject({ ok: true, rule: { status: 'approved', decidedBy: 'Ana' } });
    const after = await call(s, 'chapters_rules', { task: 'install the dependencies with pnpm' });
    expect(after.rules).toEqual([{ id, scope: 'project', category: 'tooling', text: 'Use pnpm, never npm, in this repository.' }]);
    expect(after.active).toEqual({ project: 1, session: 0 });
    // A later rejection on this machine takes it out of force again.
    await s.rules.reject(id, s.rules.machine.current(), 'Ana');
    expect((await call(s, 'chapters_rules', { task: 'pnpm' })).shown).toBe(0);
    s.store.close();
  });

  it('no tool, MCP call or argument can approve: no tool journals a decision', async () => {
    expect(TOOLS.map((t) => t.name).filter((n) => /approve|reject|decide/.test(n))).toEqual([]);
    const s = await openTemp();
    const proposed = await call(s, 'chapters_rule_propose', { text: 'Keep functions short.' });
    const mcp = await connectMcp(s.store.home);
    try {
      const names = ((await mcp.client.listTools()).tools as { name: string }[]).map((t) => t.name);
      expect(names).toContain('chapters_rules');
      expect(names.filter((n) => /approve|reject|decide/.test(n))).toEqual([]);
      expect(await mcp.call('chapters_rule_propose', { text: 'Keep functions short.', status: 'approved' })).toMatchObject({ ok: false });
    } finally {
      await mcp.close();
    }
    expect(s.rules.view(String(proposed.id))?.status).toBe('pending');
    expect(fs.readFileSync(path.join(s.store.home, 'journal.jsonl'), 'utf8')).not.toContain('"op":"rules.decided"');
    s.store.close();
  });

  it('the machine id is shared by every process on the store and keeps ids VS Code replaced', () => {
    const file = path.join(tempHome('machine'), 'machine.json');
    const a = new MachineIdentity(file, {});
    const first = a.current();
    expect(new MachineIdentity(file, {}).current()).toBe(first);
    a.adopt('vscode-machine-id');
    expect(new MachineIdentity(file, {}).ids()).toEqual(['vscode-machine-id', first]);
    expect(new MachineIdentity(file, { RECOLLECT_MACHINE_ID: 'ci' }).current()).toBe('ci');
  });
});

describe('chapters_rules', () => {
  async function approvedRules(s: Services, texts: string[], scope: 'project' | 'session' = 'project', sessionId?: string) {
    for (const text of texts) {
      const r = await call(s, 'chapters_rule_propose', { text, scope, ...(sessionId ? { sessionId } : {}) });
      await s.rules.approve(String(r.id), s.rules.machine.current(), 'Ana');
    }
  }

  it('always returns withheld, ranks with the one scorer, and stays within the budget', async () => {
    const s = await openTemp();
    const filler = Array.from({ length: 12 }, (_, i) => `Convention ${i}: document every exported function with a short comment that says why it exists.`);
    await approvedRules(s, [...filler, 'Database migrations are append-only: never edit a shipped migration.']);
    await approvedRules(s, ['In this session, answer in French.'], 'session', 'ses_0123456789abcdef');

    const all = await call(s, 'chapters_rules', { task: 'write a database migration', sessionId: 'ses_0123456789abcdef', budget: 16_000 });
    expect(all.withheld).toEqual({ count: 0, why: 'nothing was withheld: all 14 rules in force for this project and session are shown', ids: [] });
    expect(all.active).toEqual({ project: 13, session: 1 });
    expect((all.rules as { text: string }[])[0]!.text).toContain('migrations');
    expect((all.rules as { scope: string }[]).some((r) => r.scope === 'session')).toBe(true);

    const tight = await call(s, 'chapters_rules', { task: 'write a database migration', sessionId: 'ses_0123456789abcdef', budget: 150 });
    const rules = tight.rules as { id: string; text: string }[];
    const b = tight.budget as { requested: number; used: number; remaining: number };
    expect(b.used).toBeLessThanOrEqual(150);
    expect(b.used).toBe(countTokens(JSON.stringify(rules)));
    expect(rules[0]!.text).toContain('migrations');
    const withheld = tight.withheld as { count: number; why: string; ids: string[] };
    expect(withheld.count).toBe(14 - rules.length);
    expect(withheld.ids).toHaveLength(withheld.count);
    expect(withheld.why).toMatch(/did not fit the 150-token budget/);
    s.store.close();
  });

  it('a session rule applies only to its session, a project rule only to its project', async () => {
    const s = await openTemp();
    await approvedRules(s, ['Session-only rule.'], 'session', 'ses_0123456789abcdef');
    const r = await invokeTool(findTool('chapters_rules')!, { task: 'anything', sessionId: 'ses_fedcba9876543210', project: '/elsewhere' }, s, { client: 'cli' });
    expect(r).toMatchObject({ rules: [], active: { project: 0, session: 0 }, withheld: { count: 0 } });
    s.store.close();
  });
});
