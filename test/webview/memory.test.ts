import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices, type Services } from '../../src/core/services';
import { answerWebviewMessage, memoryViewHandlers } from '../../src/host/memoryViewHandlers';
import { webviewDocument } from '../../src/host/webviewHtml';
import type { RequestHandlers } from '../../webview/shared/protocol';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist', 'webview');
const WASM = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
const SHOTS = path.join(ROOT, 'test-results');
const SHOT = path.join(SHOTS, 'memory-view.png');

/** VS Code's Dark Modern values for the variables the view uses, so the screenshot is honest. */
const DARK: Record<string, string> = {
  '--vscode-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-sideBar-background': '#181818',
  '--vscode-input-background': '#313131',
  '--vscode-input-foreground': '#cccccc',
  '--vscode-input-border': '#3c3c3c',
  '--vscode-input-placeholderForeground': '#989898',
  '--vscode-focusBorder': '#0078d4',
  '--vscode-list-hoverBackground': '#2a2d2e',
  '--vscode-badge-background': '#616161',
  '--vscode-badge-foreground': '#f8f8f8',
  '--vscode-button-background': '#0078d4',
  '--vscode-button-foreground': '#ffffff',
  '--vscode-editor-findMatchHighlightBackground': 'rgba(234, 92, 0, 0.33)',
  '--vscode-textLink-foreground': '#4daafc',
  '--vscode-errorForeground': '#f85149',
  '--vscode-textCodeBlock-background': '#2b2b2b',
  '--vscode-editorWidget-background': '#202020',
  '--vscode-widget-border': '#313131',
  '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-editor-font-family': 'monospace',
};

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

/** Serves the built bundle, and at / the page the extension host would build, CSP included. */
function serve(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(webviewDocument({ name: 'memory', title: 'Memory', cspSource: origin, scriptUri: `${origin}/memory.js`, styleUri: `${origin}/memory.css`, codiconUri: `${origin}/codicon.css` }));
      return;
    }
    // Chromium asks for a favicon on its own; a VS Code webview never does.
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    const file = path.join(DIST, path.normalize(decodeURIComponent(url.pathname)));
    if (!file.startsWith(DIST + path.sep) || !fs.existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('memory browser webview, real Chromium against a real store', () => {
  let home: string;
  let services: Services;
  let handlers: RequestHandlers;
  let server: http.Server;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const requests: string[] = [];

  const count = (key: string) => page.locator(`[data-count="${key}"]`).textContent();
  const search = () => page.getByLabel('Search memory');

  beforeAll(async () => {
    if (!fs.existsSync(path.join(DIST, 'memory.js'))) {
      execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'webview'], { cwd: ROOT, stdio: 'inherit' });
    }
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-webview-'));
    let clock = Date.parse('2026-03-02T09:00:00Z');
    services = await openServices({ home, wasmPath: WASM, now: () => (clock += 60_000) });
    const m = services.memory;
    await m.remember({ statement: 'The deploy script needs the staging VPN before it can reach the database.' }, 'claude-code');
    await m.saveFact({ subject: 'recollect build', predicate: 'bundler', object: 'webpack', scope: 'project:recollect' }, 'codex');
    await m.saveFact({ subject: 'recollect build', predicate: 'bundler', object: 'vite', scope: 'project:recollect' }, 'codex');
    await m.remember({ statement: 'Team lunch is on Thursdays', subject: 'team lunch', predicate: 'day', object: 'Thursday' }, 'copilot-chat');
    // Other agents' text is untrusted: it must render as text, never as markup.
    await m.remember({ statement: 'Pasted <img src=x onerror="window.__pwned=1"> from a log stays text' }, 'claude-code');
    handlers = memoryViewHandlers(services);

    server = await serve();
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 340, height: 720 }, colorScheme: 'dark' });
    page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => msg.type() === 'error' && problems.push(`console: ${msg.text()}`));
    await page.exposeFunction('__recollectHost', async (raw: unknown) => {
      if (typeof raw === 'object' && raw !== null && 'kind' in raw) requests.push(String(raw.kind));
      return (await answerWebviewMessage(raw, handlers)) ?? null;
    });
    await page.addInitScript((palette: Record<string, string>) => {
      type Bridge = { __recollectHost(msg: unknown): Promise<unknown>; acquireVsCodeApi(): unknown; __csp: string[] };
      const w = window as unknown as Bridge;
      let state: unknown;
      // What VS Code's webview gives a page: postMessage to the host, answers as message events.
      w.acquireVsCodeApi = () => ({
        postMessage: (msg: unknown) => void w.__recollectHost(msg).then((reply) => reply && window.postMessage(reply, '*')),
        getState: () => state,
        setState: (s: unknown) => void (state = s),
      });
      w.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
      document.addEventListener('DOMContentLoaded', () => {
        for (const [k, v] of Object.entries(palette)) document.documentElement.style.setProperty(k, v);
        document.body.classList.add('vscode-dark');
      });
    }, DARK);
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    services?.store.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('shows the counts memory_status reports, and why semantic search is off', async () => {
    const status = services.memory.status();
    expect(status).toMatchObject({ facts: 3, current_facts: 2, entries: 3, entities: 2, semantic: false });
    await expect.poll(() => count('facts'), { timeout: 10_000 }).toBe(String(status.facts));
    expect(await count('current_facts')).toBe(String(status.current_facts));
    expect(await count('entries')).toBe(String(status.entries));
    expect(await count('entities')).toBe(String(status.entities));
    expect(await page.locator('[data-semantic="off"]').textContent()).toContain(status.semantic_reason);
  });

  it('lists the newest current facts and notes when the search box is empty', async () => {
    const items = page.locator('.items .item-button');
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(5);
    const texts = await items.allTextContents();
    expect(texts[0]).toContain('Pasted <img src=x'); // newest first, and shown as text
    expect(texts.join('\n')).toContain('recollect build bundler vite');
    expect(texts.join('\n')).not.toContain('webpack'); // replaced values are history, not recent
    expect(await page.locator('.items img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('searches as one types, debounced, and marks the matched words', async () => {
    requests.length = 0;
    await search().pressSequentially('stagin', { delay: 40 });
    const hit = page.locator('.items .item-button').first();
    await expect.poll(() => hit.locator('mark').allTextContents(), { timeout: 10_000 }).toEqual(['staging']);
    expect(await hit.locator('.badge').textContent()).toBe('note');
    expect(await hit.textContent()).toContain('global');
    expect(requests.filter((k) => k === 'search').length).toBeLessThanOrEqual(2);
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
    await expect.poll(() => count('entries'), { timeout: 10_000 }).toBe('4');
    await expect.poll(() => page.locator('.items .item-button').first().textContent(), { timeout: 10_000 }).toContain('CHANGELOG');
    await page.screenshot({ path: SHOT, fullPage: true });
    expect(fs.statSync(SHOT).size).toBeGreaterThan(5_000);
  });

  it('drops malformed messages and ran under the strict CSP without a violation', async () => {
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'drop_tables', params: {} }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'search', params: { query: 7 } }, handlers)).toBeUndefined();
    expect(await answerWebviewMessage({ type: 'request', id: 9, kind: 'search', params: { query: '!!!' } }, handlers)).toMatchObject({ ok: false, id: 9 });
    expect(await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
