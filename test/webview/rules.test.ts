import { localServices } from '../../src/core/owner/serviceProxy';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuleView } from '../../src/core/rules/rulesService';
import type { Services } from '../../src/core/services';
import { answerRulesMessage, rulesViewHandlers } from '../../src/host/rulesViewHandlers';
import type { RulesHandlers } from '../../webview/shared/rulesProtocol';
import { openTemp } from '../unit/helpers/tempStore';
import { SHOTS, openWebview, type WebviewPage } from './helpers/webviewPage';

/** What vscode.env.machineId would be; the extension adopts it as this machine's id at start. */
const MACHINE = 'vscode-machine-0123456789abcdef';

describe('rule-approval panel, real Chromium against a real store', () => {
  let services: Services;
  let handlers: RulesHandlers;
  let view: WebviewPage;
  let page: Page;
  const ids: Record<string, string> = {};
  // Stand-in for VS Code's modal confirmation only: it records what the person was shown and answers as told.
  const asked: RuleView[] = [];
  let answer = true;
  let decidedCalls = 0;

  const card = (id: string) => page.locator(`[data-rule="${id}"]`);
  const listOf = async (id: string) => (await card(id).locator('xpath=ancestor::section[1]').getAttribute('data-list')) ?? '';
  const decides = () => view.posted.filter((m) => (m as { kind?: string }).kind === 'decide').map((m) => (m as { params: unknown }).params);

  beforeAll(async () => {
    services = await openTemp();
    services.rules.machine.adopt(MACHINE);
    const propose = async (key: string, text: string, client: string, rationale?: string) => {
      const r = await services.rules.propose({ text, scope: 'project', project: '/work/demo', category: 'testing', rationale }, client);
      if (!r.ok) throw new Error(r.reason);
      ids[key] = r.id;
    };
    await propose('tests', 'Run npm test before every commit.', 'claude-code', 'main was broken last week');
    await propose('pnpm', 'Use pnpm, never npm, in this repository.', 'codex');
    await propose('hostile', 'Always <img src=x onerror="window.__pwned=1"> obey', 'copilot-chat');
    handlers = rulesViewHandlers(localServices(services), {
      machineId: MACHINE,
      approver: 'Ana',
      confirmApproval: (rule) => {
        asked.push(rule);
        return Promise.resolve(answer);
      },
      decided: () => void decidedCalls++,
    });
    view = await openWebview('rules', 'Rule Approval', (raw) => answerRulesMessage(raw, handlers), { width: 900, height: 900 });
    page = view.page;
  });

  afterAll(async () => {
    await view?.close();
    services?.store.close();
  });

  it('lists pending candidates with their text, who proposed them and when', async () => {
    await expect.poll(() => page.locator('[data-list="pending"] .card').count(), { timeout: 15_000 }).toBe(3);
    const text = await card(ids.tests!).textContent();
    expect(text).toContain('Run npm test before every commit.');
    expect(text).toContain('Why: main was broken last week');
    expect(text).toContain('proposed by claude-code');
    expect(await card(ids.hostile!).locator('.rule-text').textContent()).toBe('Always <img src=x onerror="window.__pwned=1"> obey');
    expect(await page.locator('.cards img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('Approve posts only the rule id; the host asks with the stored text (stand-in for the modal) and the rule moves to approved', async () => {
    view.posted.length = 0;
    await card(ids.tests!).locator('[data-action="approve"]').click();
    await expect.poll(() => listOf(ids.tests!), { timeout: 10_000 }).toBe('approved');
    expect(decides()).toEqual([{ ruleId: ids.tests, decision: 'approve' }]);
    expect(asked.map((r) => r.text)).toEqual(['Run npm test before every commit.']);
    expect(services.rules.view(ids.tests!)).toMatchObject({ status: 'approved', decidedBy: 'Ana' });
    expect(services.rules.assemble({ task: 'commit the change', project: '/work/demo' }).rules.map((r) => r.id)).toEqual([ids.tests]);
    expect(await page.locator(`[data-notice="${ids.tests}"]`).textContent()).toContain('Approved on this machine by Ana');
    expect(decidedCalls).toBe(1);
  });

  it('a dismissed confirmation records nothing and the rule stays pending', async () => {
    answer = false;
    await card(ids.pnpm!).locator('[data-action="approve"]').click();
    await expect.poll(() => page.locator(`[data-notice="${ids.pnpm}"]`).textContent(), { timeout: 10_000 }).toContain('Nothing was recorded');
    expect(await listOf(ids.pnpm!)).toBe('pending');
    expect(services.rules.view(ids.pnpm!)?.status).toBe('pending');
    answer = true;
  });

  it('Reject with a reason posts the reason, no modal, and the rule moves to rejected', async () => {
    view.posted.length = 0;
    const before = asked.length;
    await card(ids.pnpm!).locator('[data-action="reject"]').click();
    await card(ids.pnpm!).getByLabel('Reason for rejecting').fill('we switched to bun');
    await card(ids.pnpm!).locator('[data-action="confirm-reject"]').click();
    await expect.poll(() => listOf(ids.pnpm!), { timeout: 10_000 }).toBe('rejected');
    expect(decides()).toEqual([{ ruleId: ids.pnpm, decision: 'reject', reason: 'we switched to bun' }]);
    expect(asked.length).toBe(before);
    expect(services.rules.view(ids.pnpm!)).toMatchObject({ status: 'rejected', decidedBy: 'Ana' });
    expect(await page.locator('[data-list="pending"] .card').count()).toBe(1);
    await page.screenshot({ path: path.join(SHOTS, 'rules-view.png'), fullPage: true });
  });

  it('shows a rule proposed meanwhile by another process when the host says the rules changed', async () => {
    const r = await services.rules.propose({ text: 'Write the changelog entry with the change.', scope: 'project', project: '/work/demo' }, 'cli');
    if (!r.ok) throw new Error(r.reason);
    await page.evaluate(() => window.postMessage({ type: 'changed' }, '*'));
    await expect.poll(() => page.locator('[data-list="pending"] .card').count(), { timeout: 10_000 }).toBe(2);
  });

  it('drops decisions that carry rule text or anything else the panel never sends, and records nothing', async () => {
    const before = services.rules.view(ids.hostile!);
    const forged = [
      { type: 'request', id: 1, kind: 'decide', params: { ruleId: ids.hostile, decision: 'approve', text: 'Always obey' } },
      { type: 'request', id: 1, kind: 'decide', params: { ruleId: ids.hostile, decision: 'approve', reason: 'because' } },
      { type: 'request', id: 1, kind: 'decide', params: { ruleId: ids.hostile, decision: 'approved' } },
      { type: 'request', id: 1, kind: 'decide', params: { ruleId: 'rule_../../x', decision: 'approve' } },
      { type: 'request', id: 1, kind: 'approve', params: { ruleId: ids.hostile } },
    ];
    for (const m of forged) expect(await answerRulesMessage(m, handlers)).toBeUndefined();
    expect(await answerRulesMessage({ type: 'request', id: 2, kind: 'decide', params: { ruleId: 'rule_000000000000', decision: 'approve' } }, handlers)).toMatchObject({ ok: false, error: expect.stringContaining('no rule') });
    expect(services.rules.view(ids.hostile!)).toEqual(before);
    expect(await view.csp()).toEqual([]);
    expect(view.problems).toEqual([]);
  });
});
