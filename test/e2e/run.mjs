#!/usr/bin/env node
// Runs test/e2e/suite/index.cjs inside a real VS Code extension host.
//
// VS Code desktop builds cannot be downloaded on our machines, so the host is
// code-server (VS Code's server + workbench, installed from npm by scripts/e2e-setup.sh)
// rendered by Debian's headless Chromium via playwright-core. code-server 4.X.Y is
// VS Code 1.X.Y: 4.100.3 is the oldest VS Code we support, 4.139.1 the current one.
// The workbench URL's `payload` asks VS Code to load our extension in development mode
// and to run the tests module in its extension host.
//
// Pass/fail comes back through a JSON file: the suite writes it to the path in
// RECOLLECT_E2E_RESULTS, which we set on code-server and which its extension host
// inherits. The workbench's `codeAutomationExit` hook is captured too, but only as an
// early "the test run ended" signal: it carries an exit code, not test names.
//
// Does NOT build the extension: run `npm run build` first.
//
// Environment knobs:
//   RECOLLECT_E2E_EXTENSION_DIR  extension under test (default: this repository)
//   RECOLLECT_E2E_WORKSPACE      folder to open (default: a fresh empty temp folder)
//   RECOLLECT_E2E_TIMEOUT_MS     overall deadline (default 240000)
//   RECOLLECT_E2E_KEEP=1         keep the temp folder (logs, store) even on success
//   RECOLLECT_E2E_CACHE          where e2e-setup.sh caches code-server
//   RECOLLECT_E2E_CODE_SERVER    code-server version (default 4.100.3; 4.139.1 = VS Code 1.139.1)
//   RECOLLECT_E2E_ONLY           a regular expression: run only the tests it matches (and activation)
//
// A second window: a test writes `<results>.window-request`; the runner opens another page of the
// same code-server on the same folder, whose extension host runs secondWindow.cjs and reports to
// `<results>.second` (same format). Each page of code-server has an extension host of its own, so
// that is a second VS Code window on the same store. When the first window's suite is done, the
// runner closes its page (that window closes) and waits for the second window's results.

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXTENSION_DIR = path.resolve(process.env.RECOLLECT_E2E_EXTENSION_DIR || REPO);
const TESTS_MODULE = path.join(REPO, 'test/e2e/suite/index.cjs');
/** What a second window of the same code-server runs, when a test asks for one (twoWindows.cjs). */
const SECOND_WINDOW_MODULE = path.join(REPO, 'test/e2e/suite/secondWindow.cjs');
const SCREENSHOT = path.join(REPO, 'test-results/e2e-workbench.png');
const DEADLINE = Date.now() + Number(process.env.RECOLLECT_E2E_TIMEOUT_MS || 240_000);
const CHROMIUM = '/usr/bin/chromium';
const CODE_SERVER_VERSION = process.env.RECOLLECT_E2E_CODE_SERVER || '4.100.3';
/** code-server 4.X.Y ships VS Code 1.X.Y; the run fails if the host reports another. */
const EXPECTED_VSCODE = CODE_SERVER_VERSION.replace(/^4\./, '1.');
/**
 * A built VS Code from 1.10x on ignores the payload's extensionDevelopmentPath and
 * extensionTestsPath unless the smoke-test driver is on; 1.100 honours them without it.
 */
const NEEDS_SMOKE_TEST_DRIVER = Number(CODE_SERVER_VERSION.split('.')[1]) > 100;

const t0 = Date.now();
const log = (msg) => console.log(`[e2e +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

class E2eError extends Error {}
const fail = (msg) => {
  throw new E2eError(msg);
};

// ---------------------------------------------------------------------------------
// Everything started here is registered for cleanup, which runs on every exit path
// (success, failure, Ctrl-C). A leaked code-server keeps its port and ~300 MB.
// ---------------------------------------------------------------------------------
let server; // ChildProcess, leader of its own process group
let browser;
let cleanedUp = false;

async function cleanup() {
  if (cleanedUp) return;
  cleanedUp = true;
  if (browser) await browser.close().catch(() => {});
  if (server && server.exitCode === null && server.signalCode === null) {
    killGroup('SIGTERM');
    const exited = await Promise.race([
      new Promise((r) => server.once('exit', () => r(true))),
      sleep(5000).then(() => false),
    ]);
    if (!exited) killGroup('SIGKILL');
  }
  // The extension host and pty host are children of code-server, in its group; they
  // can outlive the leader briefly, so always sweep the group once more.
  if (server) killGroup('SIGKILL');
}

function killGroup(signal) {
  try {
    process.kill(-server.pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    console.error(`\n[e2e] ${sig}: stopping code-server and the browser`);
    cleanup().finally(() => process.exit(130));
  });
}
// Last resort if the process exits while cleanup() is unfinished; synchronous only.
process.on('exit', () => server && killGroup('SIGKILL'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const remaining = () => Math.max(0, DEADLINE - Date.now());

// ---------------------------------------------------------------------------------

function ensureSetup() {
  // Cheap when already set up (a few ms); prints only the code-server path on stdout.
  const out = execFileSync('bash', [path.join(REPO, 'scripts/e2e-setup.sh')], {
    env: { ...process.env, RECOLLECT_E2E_CODE_SERVER: CODE_SERVER_VERSION },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const bin = out.trim().split('\n').pop();
  if (!bin || !fs.existsSync(bin)) fail(`e2e-setup.sh did not report a code-server binary (got "${out}")`);
  return bin;
}

function checkExtensionBuilt() {
  const pkgPath = path.join(EXTENSION_DIR, 'package.json');
  if (!fs.existsSync(pkgPath)) fail(`no package.json in extension dir ${EXTENSION_DIR}`);
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8'));
  if (pkg.main && !fs.existsSync(path.resolve(EXTENSION_DIR, pkg.main))) {
    fail(`${pkg.main} does not exist in ${EXTENSION_DIR}: run \`npm run build\` first`);
  }
  return pkg;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The shared transcript fixtures: beside the repository, or where this machine keeps them. */
function findFixtures() {
  const candidates = [path.resolve(REPO, '..', 'shared', 'fixtures', 'transcripts'), '/work/shared/fixtures/transcripts'];
  return candidates.find((c) => fs.existsSync(c)) ?? '';
}

function startCodeServer(bin, port, dirs, workspace) {
  // Drop variables that make code-server think it runs inside another VS Code (e.g.
  // VSCODE_IPC_HOOK_CLI from a VS Code terminal makes it hand the folder to that
  // window and exit) and that would turn node-based children into plain node.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VSCODE_') && k !== 'ELECTRON_RUN_AS_NODE'),
  );
  Object.assign(env, {
    // Inherited by the extension host: the store under test lives in a throwaway
    // folder, and the suite knows where to write its results.
    RECOLLECT_HOME: dirs.recollectHome,
    RECOLLECT_E2E_RESULTS: dirs.results,
    HOME: dirs.home,
    RECOLLECT_E2E_FIXTURES: findFixtures(),
    // code-server otherwise writes ~/.config/code-server/config.yaml and
    // ~/.local/share/code-server; keep the machine untouched.
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
  });
  const args = [
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--config', path.join(dirs.xdgConfig, 'code-server.yaml'),
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--user-data-dir', dirs.userData,
    '--extensions-dir', dirs.extensions,
    ...(NEEDS_SMOKE_TEST_DRIVER ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    workspace,
  ];
  const logFd = fs.openSync(dirs.serverLog, 'a');
  // detached: own process group, so cleanup can kill code-server and every child
  // (extension host, pty host, file watcher) with one signal.
  const child = spawn(bin, args, { env, detached: true, stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  return child;
}

async function waitForHttp(url, child) {
  while (remaining() > 0) {
    if (child.exitCode !== null || child.signalCode !== null) {
      fail(`code-server exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      return; // any HTTP answer means the server is accepting requests
    } catch {
      await sleep(250);
    }
  }
  fail(`code-server did not answer on ${url} before the deadline`);
}

function workbenchUrl(port, workspace, testsModule = TESTS_MODULE) {
  const authority = `127.0.0.1:${port}`;
  // vscode-remote URIs must name the same authority the page was loaded from, or
  // the workbench treats them as another remote and the extension never loads.
  const payload = [
    ['extensionDevelopmentPath', `vscode-remote://${authority}${EXTENSION_DIR}`],
    ['extensionTestsPath', `vscode-remote://${authority}${testsModule}`],
    ['skipWelcome', 'true'],
  ];
  return `http://${authority}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

function readResults(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined; // not written yet (the suite renames complete files into place)
  }
}

function printTest(t) {
  const mark = t.ok ? 'PASS' : 'FAIL';
  console.log(`  ${mark}  ${t.name} (${t.ms} ms)`);
  if (t.info) console.log(`        ${JSON.stringify(t.info)}`);
  if (!t.ok) console.log(`        ${String(t.error).split('\n').join('\n        ')}`);
}

function tail(text, lines) {
  const all = text.trimEnd().split('\n');
  return (all.length > lines ? [`… (${all.length - lines} earlier lines)`] : []).concat(all.slice(-lines)).join('\n');
}

function listFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath ?? d.path, d.name));
}

function dumpDiagnostics(dirs, consoleLines) {
  const section = (title, body) => console.error(`\n===== ${title} =====\n${body || '(empty)'}`);
  const read = (f) => {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch (err) {
      return `(cannot read: ${err.message})`;
    }
  };
  section(`code-server output (${dirs.serverLog})`, tail(read(dirs.serverLog), 80));
  // The extension host's own log says why an extension failed to load/activate.
  // (remoteagent.log repeats the code-server output above, so only the host's log.)
  for (const f of listFiles(path.join(dirs.userData, 'logs')).filter((f) => /exthost\.log$/i.test(f))) {
    section(f, tail(read(f), 60));
  }
  section('browser console', tail(consoleLines.join('\n'), 120));
}

async function screenshot(page) {
  if (!page) return;
  try {
    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, timeout: 10_000 });
    log(`screenshot: ${path.relative(process.cwd(), SCREENSHOT)}`);
  } catch (err) {
    log(`screenshot failed: ${err.message}`);
  }
}

/**
 * A test that wants the workbench pictured at its own moment writes
 * `<results>.screenshot-request` ({ name, text? }) and waits for `<results>.screenshot-done`,
 * which says where the picture is and whether `text` was on screen (in any frame, webviews
 * included; with `visible`, only where it is not hidden) — so the test can assert on what a
 * person would see. `results` is the asking
 * window's results file; each window is answered on its own page.
 */
async function answerScreenshotRequest(page, results, firstPage) {
  const request = `${results}.screenshot-request`;
  let wanted;
  try {
    wanted = JSON.parse(fs.readFileSync(request, 'utf8'));
  } catch {
    return; // no request, or one still being written
  }
  const name = /^[\w-]{1,60}$/.test(wanted.name ?? '') ? wanted.name : 'requested';
  // A second window may ask what the first one's page shows (`page: 'first'`).
  if (wanted.page === 'first') page = firstPage && !firstPage.isClosed() ? firstPage : undefined;
  const file = path.join(path.dirname(SCREENSHOT), `e2e-${name}.png`);
  let found = null;
  try {
    if (!page) throw new Error('the first window is closed');
    if (typeof wanted.text === 'string') {
      found = false;
      for (const frame of page.frames()) {
        const matches = frame.getByText(wanted.text);
        if (await (wanted.visible ? matches.filter({ visible: true }) : matches).count().catch(() => 0)) {
          found = true;
          break;
        }
      }
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await page.screenshot({ path: file, timeout: 10_000 });
    log(`screenshot: ${path.relative(process.cwd(), file)}${found === null ? '' : ` ("${wanted.text}" ${found ? 'on screen' : 'NOT on screen'})`}`);
  } catch (err) {
    log(`screenshot ${name} failed: ${err.message}`);
    fs.rmSync(request, { force: true });
    fs.writeFileSync(`${results}.screenshot-done`, JSON.stringify({ file: null, found: null, error: err.message }));
    return;
  }
  fs.rmSync(request, { force: true });
  fs.writeFileSync(`${results}.screenshot-done`, JSON.stringify({ file, found }));
}

/**
 * A test that needs a person's click inside a webview writes `<results>.click-request`
 * ({ selector }) and waits for `<results>.click-done` ({ clicked, frame?, error? }). The
 * extension host cannot reach into a webview's page; the browser driving the workbench can,
 * so the click is a real one, in whichever frame (webviews included) holds the selector.
 */
async function answerClickRequest(page, results) {
  const request = `${results}.click-request`;
  let wanted;
  try {
    wanted = JSON.parse(fs.readFileSync(request, 'utf8'));
  } catch {
    return; // no request, or one still being written
  }
  fs.rmSync(request, { force: true });
  let answer = { clicked: false, error: 'no frame on the page holds that selector (yet)' };
  if (typeof wanted.selector !== 'string' || !wanted.selector || wanted.selector.length > 300) {
    answer = { clicked: false, error: 'the request needs a selector of at most 300 characters' };
  } else {
    for (const frame of page.frames()) {
      const target = frame.locator(wanted.selector);
      if (!(await target.count().catch(() => 0))) continue;
      try {
        await target.first().click({ timeout: 10_000 });
        answer = { clicked: true, frame: frame.url().slice(0, 160) };
      } catch (err) {
        answer = { clicked: false, error: err.message.split('\n')[0] };
      }
      break;
    }
  }
  log(`click ${wanted.selector}: ${answer.clicked ? 'clicked' : answer.error}`);
  fs.writeFileSync(`${results}.click-done`, JSON.stringify(answer));
}

/** A page of its own for a second window, opened when a test asks (`<results>.window-request`). */
async function answerWindowRequest(results, open) {
  const request = `${results}.window-request`;
  if (!fs.existsSync(request)) return undefined;
  fs.rmSync(request, { force: true });
  let answer;
  let page;
  try {
    page = await open();
    answer = { opened: true };
  } catch (err) {
    answer = { opened: false, error: err.message.split('\n')[0] };
  }
  log(`second window: ${answer.opened ? 'opened' : answer.error}`);
  fs.writeFileSync(`${results}.window-done`, JSON.stringify(answer));
  return page;
}

async function newWorkbenchPage(consoleLines, tag) {
  // Clipboard access lets the extension's clipboard fallback be read back by the tests.
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  page.on('console', (m) => consoleLines.push(`${tag}[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`${tag}[pageerror] ${e.message}`));
  page.on('crash', () => consoleLines.push(`${tag}[crash] page crashed`));
  return page;
}

// ---------------------------------------------------------------------------------

async function main() {
  const codeServer = ensureSetup();
  const pkg = checkExtensionBuilt();
  log(`extension ${pkg.publisher}.${pkg.name}@${pkg.version} from ${EXTENSION_DIR}, code-server ${CODE_SERVER_VERSION}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-e2e-'));
  const dirs = {
    tmp,
    userData: path.join(tmp, 'user-data'),
    extensions: path.join(tmp, 'extensions'),
    recollectHome: path.join(tmp, 'recollect-home'),
    // A home of its own, so the extension imports only the transcripts the tests place there.
    home: path.join(tmp, 'home'),
    xdgConfig: path.join(tmp, 'xdg-config'),
    xdgData: path.join(tmp, 'xdg-data'),
    results: path.join(tmp, 'results.json'),
    serverLog: path.join(tmp, 'code-server.log'),
  };
  for (const d of [dirs.userData, dirs.extensions, dirs.recollectHome, dirs.home, dirs.xdgConfig, dirs.xdgData]) {
    fs.mkdirSync(d, { recursive: true });
  }
  let workspace = process.env.RECOLLECT_E2E_WORKSPACE;
  if (workspace) workspace = path.resolve(workspace);
  else {
    workspace = path.join(tmp, 'workspace');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, 'README.md'), '# Recollect e2e workspace\n');
  }

  const consoleLines = [];
  let passed = false;
  let page;
  try {
    const port = await freePort();
    server = startCodeServer(codeServer, port, dirs, workspace);
    log(`code-server pid ${server.pid} on 127.0.0.1:${port} (temp ${tmp})`);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, server);
    log('code-server is answering');

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // launch() already uses a fresh temporary profile, deleted on close.
      // Playwright's own signal handlers would close the browser and exit(130) at
      // once, before our cleanup() stops code-server; we handle signals ourselves.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await newWorkbenchPage(consoleLines, '');

    // The workbench calls this when the extension host running the tests exits.
    let automationExit;
    await page.exposeFunction('codeAutomationExit', (code) => {
      automationExit ??= { code, at: Date.now() };
    });

    await page.goto(workbenchUrl(port, workspace), { timeout: remaining() });
    await page.waitForSelector('.monaco-workbench', { timeout: Math.min(remaining(), 90_000) });
    log(`workbench loaded (Chromium ${browser.version()})`);

    const second = { results: `${dirs.results}.second`, page: undefined, printed: 0 };
    const openSecond = async () => {
      const p = await newWorkbenchPage(consoleLines, '(second window) ');
      await p.goto(workbenchUrl(port, workspace, SECOND_WINDOW_MODULE), { timeout: remaining() });
      await p.waitForSelector('.monaco-workbench', { timeout: Math.min(remaining(), 90_000) });
      return p;
    };
    const serveSecond = async () => {
      if (!second.page) return undefined;
      await answerScreenshotRequest(second.page, second.results, page);
      await answerClickRequest(second.page, second.results);
      const r = readResults(second.results);
      for (const t of r?.tests.slice(second.printed) ?? []) printTest({ ...t, name: `(second window) ${t.name}` });
      second.printed = r?.tests.length ?? second.printed;
      return r;
    };

    // Poll the results file, printing tests as they finish.
    let printed = 0;
    let results;
    for (;;) {
      await answerScreenshotRequest(page, dirs.results);
      await answerClickRequest(page, dirs.results);
      second.page ??= await answerWindowRequest(dirs.results, openSecond);
      await serveSecond();
      results = readResults(dirs.results);
      for (const t of results?.tests.slice(printed) ?? []) printTest(t);
      printed = results?.tests.length ?? printed;
      if (results?.done) break;
      if (server.exitCode !== null || server.signalCode !== null) fail('code-server exited during the tests');
      // The host has exited: give the last rename a moment, then stop waiting.
      if (automationExit && Date.now() - automationExit.at > 5000) {
        fail(`the extension host exited (code ${automationExit.code}) without completing ${dirs.results}`);
      }
      if (remaining() === 0) {
        fail(`timed out after ${((Date.now() - t0) / 1000).toFixed(0)} s waiting for ${dirs.results}` +
          (results ? ` (${printed} test(s) finished, the next one hangs)` : ' (the suite never started)'));
      }
      await sleep(250);
    }
    await screenshot(page);

    let secondResults;
    if (second.page) {
      // The first window closes (VS Code's test support already ended its extension host when its
      // tests ended, as a closing window does); the second takes the store over and finishes its tests.
      await page.close({ runBeforeUnload: true });
      log('first window closed; waiting for the second window');
      for (;;) {
        secondResults = await serveSecond();
        if (secondResults?.done) break;
        if (server.exitCode !== null || server.signalCode !== null) fail('code-server exited during the second window\'s tests');
        if (remaining() === 0) fail(`timed out waiting for the second window's results (${second.results})`);
        await sleep(250);
      }
      page = second.page;
      await screenshot(page);
      if (secondResults.fatal) fail(`the second window's suite crashed: ${secondResults.fatal}`);
      results.tests.push(...secondResults.tests.map((t) => ({ ...t, name: `(second window) ${t.name}` })));
    }

    if (results.fatal) fail(`the suite crashed: ${results.fatal}`);
    if (results.env?.RECOLLECT_HOME !== dirs.recollectHome) {
      fail(`RECOLLECT_HOME did not reach the extension host (saw ${results.env?.RECOLLECT_HOME})`);
    }
    const failed = results.tests.filter((t) => !t.ok).length;
    console.log(`\nVS Code ${results.vscodeVersion} (extension host node ${results.node}): ` +
      `${results.tests.length - failed} passed, ${failed} failed`);
    if (results.tests.length === 0) fail('no tests ran');
    if (results.vscodeVersion !== EXPECTED_VSCODE) fail(`code-server ${CODE_SERVER_VERSION} should be VS Code ${EXPECTED_VSCODE}, the host says ${results.vscodeVersion}`);
    passed = failed === 0;
    if (!passed) dumpDiagnostics(dirs, consoleLines);
  } catch (err) {
    console.error(`\n[e2e] FAILED: ${err instanceof E2eError ? err.message : err.stack || err}`);
    await screenshot(page);
    dumpDiagnostics(dirs, consoleLines);
  } finally {
    await cleanup();
    if (passed && !process.env.RECOLLECT_E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
    else console.error(`[e2e] kept ${tmp} (logs, user data, RECOLLECT_HOME)`);
  }
  log(passed ? 'e2e passed' : 'e2e FAILED');
  return passed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    console.error(`[e2e] ${err instanceof E2eError ? err.message : err.stack || err}`);
    await cleanup();
    process.exit(1);
  },
);
