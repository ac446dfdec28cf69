import { localServices } from '../../src/core/owner/serviceProxy';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionBrowse } from '../../src/core/history/sessionBrowse';
import type { Services } from '../../src/core/services';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import type { MemoryViewPorts } from '../../src/host/memoryViewActions';
import { answerWebviewMessage, memoryViewHandlers } from '../../src/host/memoryViewHandlers';
import type { RequestHandlers } from '../../webview/shared/protocol';
import { transcriptFixtures } from '../unit/helpers/fixtures';
import { openTemp, tempHome } from '../unit/helpers/tempStore';
import { SHOTS, openWebview, type WebviewPage } from './helpers/webviewPage';

const SHOT = path.join(SHOTS, 'memory-view.png');
const NOTE = 'ops/runbook.md';

async function call(s: Services, name: string, input: unknown, client = 'vitest'): Promise<Record<string, unknown>> {
  const tool = findTool(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return (await invokeTool(tool, input, s, { client })) as Record<string, unknown>;
}

describe('memory browser webview, real Chromium against a real store', () => {
  let home: string;
  let services: Services;
  let handlers: RequestHandlers;
  let view: WebviewPage;
  let page: Page;
  // Stand-ins for what only VS Code does (its modal dialog, opening editors and panels): they record and answer as told.
  const confirms: { message: string; action: string }[] = [];
  let confirmAnswer = true;
  const opened: string[] = [];

  const count = (key: string) => page.locator(`[data-count="${key}"]`).textContent();
  const search = () => page.getByLabel('Search memory');
  const kinds = () => view.posted.map((m) => String((m as { kind?: unknown }).kind));
  const section = (id: string) => page.locator(`[data-section="${id}"]`);
  const pwned = () => page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned);

  beforeAll(async () => {
    home = tempHome('webview');
    let clock = Date.parse('2026-03-02T09:00:00Z');
    services = await openTemp(home, () => (clock += 60_000));
    const m = services.memory;
    await m.remember({ statement: 'The deploy script needs the staging VPN before it can reach the database.' }, 'claude-code');
    await m.saveFact({ subject: 'recollect build', predicate: 'bundler', object: 'webpack', scope: 'project:recollect' }, 'codex');
    await m.saveFact({ subject: 'recollect build', predicate: 'bundler', object: 'vite', scope: 'project:recollect' }, 'codex');
    await m.remember({ statement: 'Team lunch is on Thursdays', subject: 'team lunch', predicate: 'day', object: 'Thursday' }, 'copilot-chat');
    await call(services, 'remember_note', { text: 'Standup moved to 10:00 on Mondays' }, 'copilot-chat');
    // Other agents' text is untrusted: it must render as text, never as markup.
    await m.remember({ statement: 'Pasted <img src=x onerror="window.__pwned=1"> from a log stays text' }, 'claude-code');
    await call(services, 'write_error', {
      tool_name: 'npm', keywords: ['cache'], symptom: 'Build log showed <img src=x onerror="window.__pwned=2"> and EINTEGRITY',
      cause: 'a corrupted npm cache', action: 'Run npm cache clean --force, then install again', outcome: 'resolved',
    }, 'claude-code');
    // A rule's project is a folder that exists on this machine.
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-demo-project-'));
    await call(services, 'chapters_rule_propose', { text: 'Run npm test before every commit.', project, category: 'testing' }, 'codex');
    await call(services, 'whats_new', {}, 'beta');
    await call(services, 'ask_agent', { to: 'beta', request: '<img src=x onerror="window.__pwned=3"> Which port does the dev server use?' }, 'alpha');
    await services.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
    fs.mkdirSync(path.join(home, 'vault', 'ops'), { recursive: true });
    fs.writeFileSync(path.join(home, 'vault', ...NOTE.split('/')), '# Runbook\n\nRestart the queue worker with make restart-worker.\n');
    await call(services, 'index_memory', {});

    const ports: MemoryViewPorts = {
      confirm: (message, _detail, action) => {
        confirms.push({ message, action });
        return Promise.resolve(confirmAnswer);
      },
      openFile: (file) => Promise.resolve(void opened.push(`file:${file}`)),
      openSession: (id) => Promise.resolve(void opened.push(`session:${id}`)),
      openRules: () => Promise.resolve(void opened.push('rules')),
      vaultRoot: path.join(home, 'vault'),
    };
    handlers = memoryViewHandlers(localServices(services), ports);
    view = await openWebview('memory', 'Memory', (raw) => answerWebviewMessage(raw, handlers), { width: 340, height: 900 });
    page = view.page;
  });

  afterAll(async () => {
    await view?.close();
    services?.store.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('shows the counts memory_status reports, and why semantic search is off', async () => {
    const status = services.memory.status();
    expect(status).toMatchObject({ facts: 3, current_facts: 2, entries: 4, entities: 2, semantic: false });
    await expect.poll(() => count('facts'), { timeout: 10_000 }).toBe(String(status.facts));
    expect(await count('current_facts')).toBe(String(status.current_facts));
    expect(await count('entries')).toBe(String(status.entries));
    expect(await count('entities')).toBe(String(status.entities));
    expect(await page.locator('[data-semantic="off"]').textContent()).toContain(status.semantic_reason);
  });

  it('lists the newest current facts and notes when the search box is empty', async () => {
    const items = page.locator('.items .item-button');
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(6);
    const texts = await items.allTextContents();
    expect(texts[0]).toContain('Pasted <img src=x'); // newest first, and shown as text
    expect(texts.join('\n')).toContain('recollect build bundler vite');
    expect(texts.join('\n')).not.toContain('webpack'); // replaced values are history, not recent
    expect(await page.locator('.items .retire').count()).toBe(6);
  });

  it('renders every section from the store, other agents’ markup as inert text', async () => {
    await expect.poll(() => section('retired').count(), { timeout: 10_000 }).toBe(1);
    const error = section('errors').locator('.row-error');
    expect(await error.count()).toBe(1);
    expect(await error.locator('.symptom').textContent()).toBe('Build log showed <img src=x onerror="window.__pwned=2"> and EINTEGRITY');
    expect(await error.locator('.fix').textContent()).toContain('npm cache clean --force');
    expect(await error.textContent()).toContain('a corrupted npm cache');

    const rule = section('rules').locator('.row-rule');
    expect(await rule.getAttribute('data-status')).toBe('pending');
    expect(await rule.textContent()).toContain('Run npm test before every commit.');
    expect(await section('rules').getByRole('button', { name: 'Review 1 pending' }).count()).toBe(1);

    const request = section('requests').locator('.row-request');
    expect(await request.locator('.request-text').textContent()).toBe('<img src=x onerror="window.__pwned=3"> Which port does the dev server use?');
    expect(await request.textContent()).toContain('alpha → beta');
    expect(await section('requests').textContent()).toContain('1 open · 0 answered · 0 closed');

    const sessions = section('sessions').locator('.row-session');
    const listed = new SessionBrowse(services.store).list({ limit: 25 });
    expect(await sessions.count()).toBe(listed.sessions.length);
    // Newest first, each with its source and run count: the fixture's Claude Code sessions (tool calls are in the activity section, never here).
    const runs = new SessionBrowse(services.store).runCounts(listed.sessions.map((x) => x.id));
    expect(await sessions.locator('button').evaluateAll((els) => els.map((e) => e.getAttribute('data-session')))).toEqual(listed.sessions.map((x) => x.id));
    for (const [i, x] of listed.sessions.entries()) {
      const n = runs[x.id] ?? 0;
      expect(await sessions.nth(i).textContent()).toContain(`${x.source}`);
      expect(await sessions.nth(i).textContent()).toContain(`${n} ${n === 1 ? 'run' : 'runs'}`);
    }
    expect(listed.sessions.some((x) => x.source === 'claude-code' && (runs[x.id] ?? 0) > 1)).toBe(true);

    expect(await section('log').locator('.row-entry').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('Standup moved to 10:00')]));
    expect(await section('notes').locator('.row-note').textContent()).toContain('Runbook');
    expect(await section('entities').locator('.row-entity').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('recollect build')]));
    expect(await section('retired').locator('.section-empty').textContent()).toContain('Nothing retired');

    // Recollect's own calls (the setup's, newest first) come from the activity log, other agents' input as text.
    const held = services.activity.recent(25);
    const activity = section('activity').locator('.row-activity');
    expect(await activity.count()).toBe(held.rows.length);
    expect(await activity.locator('.badge').allTextContents()).toEqual(held.rows.map((r) => r.tool));
    expect(held.rows.map((r) => r.tool)).toEqual(['index_memory', 'ask_agent', 'whats_new', 'chapters_rule_propose', 'write_error', 'remember_note']);
    expect(await activity.nth(1).locator('.row-text').textContent()).toContain('<img src=x onerror=\\"window.__pwned=3\\">');

    expect(await page.locator('img').count()).toBe(0);
    expect(await pwned()).toBeUndefined();
    await page.screenshot({ path: path.join(SHOTS, 'memory-view-sections.png'), fullPage: true });
  });

  it('folds a section from the keyboard and keeps it folded across a reload', async () => {
    // Tab from the search box reaches every section's heading, Recent's items on the way.
    await search().focus();
    const reached: string[] = [];
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      reached.push(await page.evaluate(() => `${document.activeElement?.closest('[data-section]')?.getAttribute('data-section') ?? ''}:${document.activeElement?.className ?? ''}`));
    }
    for (const id of ['recent', 'errors', 'rules', 'requests', 'sessions', 'log', 'notes', 'entities', 'retired', 'activity']) expect(reached).toContain(`${id}:section-toggle`);
    const toggle = section('errors').locator('.section-toggle');
    await toggle.focus();
    await page.keyboard.press('Enter');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await page.locator('#section-errors').count()).toBe(0);
    await page.reload();
    await expect.poll(() => section('errors').locator('.section-toggle').getAttribute('aria-expanded'), { timeout: 10_000 }).toBe('false');
    await section('errors').locator('.section-toggle').focus();
    await page.keyboard.press('Space');
    await expect.poll(() => section('errors').locator('.row-error').count()).toBe(1);
  });

  it('takes its colours from the VS Code theme, and draws focus as a border in high contrast', async () => {
    const toggle = section('rules').locator('.section-toggle');
    await page.evaluate(() => {
      document.documentElement.style.setProperty('--vscode-foreground', 'rgb(1, 2, 3)');
      document.documentElement.style.setProperty('--vscode-badge-background', 'rgb(4, 5, 6)');
      document.body.classList.replace('vscode-dark', 'vscode-high-contrast');
    });
    expect(await toggle.evaluate((e) => getComputedStyle(e).color)).toBe('rgb(1, 2, 3)');
    expect(await toggle.locator('.count-badge').evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(4, 5, 6)');
    await toggle.focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    expect(await toggle.evaluate((e) => getComputedStyle(e).outlineStyle)).toBe('dashed');
    await page.screenshot({ path: path.join(SHOTS, 'memory-view-high-contrast.png') });
    await page.evaluate(() => {
      document.documentElement.style.setProperty('--vscode-foreground', '#cccccc');
      document.documentElement.style.setProperty('--vscode-badge-background', '#616161');
      document.body.classList.replace('vscode-high-contrast', 'vscode-dark');
    });
  });

  it('opens a session in Session History, a note in an editor, and the rule review (VS Code stood in by a recorder)', async () => {
    opened.length = 0;
    const first = section('sessions').locator('.row-session button').first();
    const id = await first.getAttribute('data-session');
    await first.click();
    await section('notes').locator('.row-link').click();
    await section('rules').getByRole('button', { name: 'Review 1 pending' }).click();
    await expect.poll(() => opened.length, { timeout: 10_000 }).toBe(3);
    expect(opened).toEqual([`session:${id}`, `file:${path.join(home, 'vault', 'ops', 'runbook.md')}`, 'rules']);
  });

  it('shows an entity’s facts with their history', async () => {
    await section('entities').locator('.row-button', { hasText: 'recollect build' }).click();
    await expect.poll(() => page.locator('.version').count(), { timeout: 10_000 }).toBe(2);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-item') ?? '')).toBe('entity:recollect build');
  });

  it('asks before retiring (the VS Code modal stood in): dismissed changes nothing, confirmed retires through retire_memory’s service', async () => {
    confirms.length = 0;
    confirmAnswer = false;
    const note = section('notes').locator('.row-note');
    await note.locator('.retire').click();
    await expect.poll(() => page.locator('[data-outcome="cancelled"]').textContent(), { timeout: 10_000 }).toContain('Nothing was retired');
    expect(confirms).toEqual([{ message: `Retire the note ${NOTE}?`, action: 'Retire' }]);
    expect(fs.existsSync(path.join(home, 'vault', 'ops', 'runbook.md'))).toBe(true);
    // An entry's confirmation quotes the entry, read from the store rather than from the page.
    await section('log').locator('.row-entry', { hasText: 'Standup moved' }).locator('.retire').click();
    await expect.poll(() => confirms.length, { timeout: 10_000 }).toBe(2);
    expect(confirms[1]?.message).toMatch(/^Retire the \d{4}-\d{2}-\d{2} log entry “Standup moved to 10:00 on Mondays”\?$/);
    expect(await section('log').locator('.row-entry', { hasText: 'Standup moved' }).count()).toBe(1);

    confirmAnswer = true;
    await note.locator('.retire').click();
    await expect.poll(() => page.locator('[data-outcome="done"]').textContent(), { timeout: 10_000 }).toContain(`Retired note:${NOTE}`);
    await expect.poll(() => section('retired').locator('.row-retired').count(), { timeout: 10_000 }).toBe(1);
    expect(await section('notes').locator('.section-empty').count()).toBe(1);
    expect(fs.existsSync(path.join(home, 'vault', 'ops', 'runbook.md'))).toBe(false);
    expect(services.browse.retired(10).items.map((r) => r.id)).toEqual([`note:${NOTE}`]);
  });

  it('shows restore_memory’s refusal when a file now occupies the retired note’s path, and overwrites nothing', async () => {
    const occupant = '# Someone else’s runbook\n';
    fs.writeFileSync(path.join(home, 'vault', 'ops', 'runbook.md'), occupant);
    confirms.length = 0;
    await section('retired').locator('.restore').click();
    const alert = page.locator('[data-outcome="refused"]');
    await expect.poll(() => alert.textContent(), { timeout: 10_000 }).toContain('does not overwrite');
    expect(await alert.getAttribute('role')).toBe('alert');
    expect(confirms).toEqual([{ message: `Restore the note ${NOTE}?`, action: 'Restore' }]);
    expect(fs.readFileSync(path.join(home, 'vault', 'ops', 'runbook.md'), 'utf8')).toBe(occupant);
    await page.screenshot({ path: path.join(SHOTS, 'memory-view-restore-refused.png'), fullPage: true });
  });

  it('searches as one types, debounced, and marks the matched words', async () => {
    const before = kinds().length;
    await search().pressSequentially('stagin', { delay: 40 });
    const hit = page.locator('.items .item-button').first();
    await expect.poll(() => hit.locator('mark').allTextContents(), { timeout: 10_000 }).toEqual(['staging']);
    expect(await hit.locator('.badge').textContent()).toBe('note');
    expect(await hit.textContent()).toContain('global');
    expect(kinds().slice(before).filter((k) => k === 'search').length).toBeLessThanOrEqual(2);
    expect(await page.locator('.sections').count()).toBe(0); // a search shows matches only
    await page.screenshot({ path: path.join(SHOTS, 'memory-view-search.png') });
  });

  it('opens a fact’s history with the replaced and the current value', async () => {
    await search().fill('bundler');
    const fact = page.locator('.item-fact .item-button').first();
    await expect.poll(() => fact.textContent(), { timeout: 10_000 }).toContain('vite');
    await fact.click();
    await expect.poll(() => page.locator('.version').count(), { timeout: 10_000 }).toBe(2);
    expect(await page.locator('#history-title').textContent()).toContain('recollect build');
    expect(await page.locator('[data-status="current"] .object').textContent()).toBe('vite');
    expect(await page.locator('[data-status="historical"] .object').textContent()).toBe('webpack');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('history-title');
    await page.screenshot({ path: path.join(SHOTS, 'memory-view-history.png') });
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-item') ?? '')).toMatch(/^fact:/);
  });

  it('says so when nothing matches', async () => {
    await search().fill('zebra');
    await expect.poll(() => page.locator('.empty').textContent(), { timeout: 10_000 }).toContain('Nothing in memory matches “zebra”');
  });

  it('picks up a write made elsewhere when the view asks for a refresh', async () => {
    await services.memory.remember({ statement: 'Release notes live in docs/CHANGELOG.md' }, 'cli');
    await search().fill('');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => count('entries'), { timeout: 10_000 }).toBe(String(services.memory.status().entries));
    await expect.poll(() => page.locator('.items .item-button').first().textContent(), { timeout: 10_000 }).toContain('CHANGELOG');
    await expect.poll(() => section('log').locator('.row-entry').first().textContent(), { timeout: 10_000 }).toContain('CHANGELOG');
    await page.screenshot({ path: SHOT, fullPage: true });
    expect(fs.statSync(SHOT).size).toBeGreaterThan(5_000);
  });

  it('drops malformed messages and ran under the strict CSP without a violation', async () => {
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'drop_tables', params: {} }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'search', params: { query: 7 } }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'retire', params: { id: 'rm -rf /' } }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'retire', params: { id: 'fact:x', text: 'extra' } }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'open', params: { kind: 'session', sessionId: '../../etc' } }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'open', params: { kind: 'vault', path: '../secrets.md' } }, handlers)).toMatchObject({ ok: true, result: { opened: false, reason: expect.stringContaining('".."') } });
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'search', params: { query: '!!!' } }, handlers)).toMatchObject({ ok: false, id: 9 });
    expect(await pwned()).toBeUndefined();
    expect(await view.csp()).toEqual([]);
    expect(view.problems).toEqual([]);
  });
});
