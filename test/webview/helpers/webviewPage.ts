import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { webviewDocument } from '../../../src/host/webviewHtml';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const DIST = path.join(ROOT, 'dist', 'webview');
export const SHOTS = path.join(ROOT, 'test-results');

/** VS Code's Dark Modern values for the variables the views use, so screenshots are honest. */
const DARK: Record<string, string> = {
  '--vscode-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-editor-background': '#1f1f1f',
  '--vscode-sideBar-background': '#181818',
  '--vscode-panel-border': '#2b2b2b',
  '--vscode-input-background': '#313131',
  '--vscode-input-foreground': '#cccccc',
  '--vscode-input-border': '#3c3c3c',
  '--vscode-dropdown-background': '#313131',
  '--vscode-focusBorder': '#0078d4',
  '--vscode-list-hoverBackground': '#2a2d2e',
  '--vscode-list-activeSelectionBackground': '#04395e',
  '--vscode-badge-background': '#616161',
  '--vscode-badge-foreground': '#f8f8f8',
  '--vscode-button-background': '#0078d4',
  '--vscode-button-foreground': '#ffffff',
  '--vscode-button-secondaryBackground': '#313131',
  '--vscode-button-secondaryForeground': '#cccccc',
  '--vscode-editor-findMatchHighlightBackground': 'rgba(234, 92, 0, 0.33)',
  '--vscode-editorWarning-foreground': '#cca700',
  '--vscode-testing-iconPassed': '#73c991',
  '--vscode-textLink-foreground': '#4daafc',
  '--vscode-errorForeground': '#f85149',
  '--vscode-textCodeBlock-background': '#2b2b2b',
  '--vscode-editorWidget-background': '#202020',
  '--vscode-widget-border': '#313131',
  '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-editor-font-family': 'monospace',
};

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.ttf': 'font/ttf' };

export function ensureBuilt(name: string): void {
  if (!fs.existsSync(path.join(DIST, `${name}.js`))) {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'webview'], { cwd: ROOT, stdio: 'inherit' });
  }
}

/** Serves the built bundles, and at / the page the extension host would build for `name`, CSP included. */
export function serve(name: string, title: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(webviewDocument({ name, title, cspSource: origin, scriptUri: `${origin}/${name}.js`, styleUri: `${origin}/${name}.css`, codiconUri: `${origin}/codicon.css` }));
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

export interface WebviewPage {
  browser: Browser;
  page: Page;
  server: http.Server;
  url: string;
  /** Page errors, failed loads and console errors: a clean run leaves this empty. */
  problems: string[];
  /** Every message the page posted, as posted. */
  posted: unknown[];
  /** CSP violations the page saw. */
  csp(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A real Chromium showing one view against `answer` — the host's own vscode-free handlers —
 * through what VS Code gives a webview: postMessage to the host, answers as message events,
 * getState/setState that survive a reload (kept in sessionStorage, as VS Code keeps them).
 */
export async function openWebview(name: string, title: string, answer: (raw: unknown) => Promise<unknown>, viewport = { width: 1200, height: 800 }): Promise<WebviewPage> {
  ensureBuilt(name);
  const server = await serve(name, title);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport, colorScheme: 'dark' });
  const problems: string[] = [];
  const posted: unknown[] = [];
  page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console: ${msg.text()}`));
  await page.exposeFunction('__recollectHost', async (raw: unknown) => {
    posted.push(raw);
    return (await answer(raw)) ?? null;
  });
  await page.addInitScript((palette: Record<string, string>) => {
    type Bridge = { __recollectHost(msg: unknown): Promise<unknown>; acquireVsCodeApi(): unknown; __csp: string[] };
    const w = window as unknown as Bridge;
    w.acquireVsCodeApi = () => ({
      postMessage: (msg: unknown) => void w.__recollectHost(msg).then((reply) => reply && window.postMessage(reply, '*')),
      getState: () => {
        const s = sessionStorage.getItem('vscode-state');
        return s === null ? undefined : (JSON.parse(s) as unknown);
      },
      setState: (s: unknown) => sessionStorage.setItem('vscode-state', JSON.stringify(s)),
    });
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    document.addEventListener('DOMContentLoaded', () => {
      for (const [k, v] of Object.entries(palette)) document.documentElement.style.setProperty(k, v);
      document.body.classList.add('vscode-dark');
    });
  }, DARK);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  await page.goto(url);
  return {
    browser,
    page,
    server,
    url,
    problems,
    posted,
    csp: () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp),
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Posts a message to the page the way the host does (VS Code's webview.postMessage). */
export function hostPost(page: Page, message: unknown): Promise<void> {
  return page.evaluate((m) => window.postMessage(m, '*'), message);
}
