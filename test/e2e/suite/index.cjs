'use strict';
// End-to-end tests that run INSIDE a real VS Code extension host (code-server), loaded
// through the `extensionTestsPath` payload by test/e2e/run.mjs.
//
// CommonJS on purpose: VS Code loads the tests module with require(), and `vscode` is
// only resolvable through the extension host's require.
//
// No mocha: a test framework would have to be resolvable from here and bundled or
// installed; a list of async functions run in order is all we need.
//
// Results go to the JSON file named by RECOLLECT_E2E_RESULTS. It is rewritten after
// every test (atomically), so the runner can stream progress and still has partial
// results if something hangs.

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

const EXTENSION_ID = 'recollect.recollect';
const DEFAULT_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------
// Tiny runner
// ---------------------------------------------------------------------------------

const tests = [];
function test(name, fn, timeoutMs = DEFAULT_TIMEOUT_MS) {
  tests.push({ name, fn, timeoutMs });
}

class AssertionError extends Error {}
function assert(condition, message) {
  if (!condition) throw new AssertionError(message);
}

function withTimeout(promise, ms, name) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new AssertionError(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function writeResults(file, results) {
  // Write-then-rename: the runner polls this file and must never read half of it.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(results, null, 2));
  fs.renameSync(tmp, file);
}

async function runAll(resultsFile) {
  const results = {
    done: false,
    vscodeVersion: vscode.version,
    node: process.version,
    // Whether the variables run.mjs put on code-server reached this process; the
    // extension under test depends on RECOLLECT_HOME pointing at a throwaway store.
    env: { RECOLLECT_HOME: process.env.RECOLLECT_HOME || null },
    startedAt: new Date().toISOString(),
    tests: [],
  };
  writeResults(resultsFile, results);

  for (const t of tests) {
    const started = Date.now();
    const entry = { name: t.name, ok: false };
    try {
      // Context shared with the test so it can attach details to the report.
      const info = {};
      await withTimeout(Promise.resolve().then(() => t.fn(info)), t.timeoutMs, t.name);
      entry.ok = true;
      if (Object.keys(info).length) entry.info = info;
    } catch (err) {
      entry.error = err instanceof AssertionError ? err.message : String((err && err.stack) || err);
    }
    entry.ms = Date.now() - started;
    results.tests.push(entry);
    writeResults(resultsFile, results);
  }

  results.done = true;
  results.passed = results.tests.filter((t) => t.ok).length;
  results.failed = results.tests.length - results.passed;
  results.finishedAt = new Date().toISOString();
  writeResults(resultsFile, results);
  return results;
}

// Entry point called by VS Code's extension test support. Rejecting makes the
// extension host exit with code 1, which run.mjs sees as a second signal.
exports.run = async function run() {
  const resultsFile = process.env.RECOLLECT_E2E_RESULTS;
  if (!resultsFile) {
    // Without the file the runner can only time out, so say why as loudly as possible.
    const msg = 'RECOLLECT_E2E_RESULTS is not set in the extension host: environment was not inherited from code-server';
    console.error(msg);
    throw new Error(msg);
  }
  fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
  let results;
  try {
    results = await runAll(resultsFile);
  } catch (err) {
    // A bug in the runner itself: record it so the run fails with a reason.
    writeResults(resultsFile, { done: true, fatal: String((err && err.stack) || err), tests: [] });
    throw err;
  }
  if (results.failed > 0) throw new Error(`${results.failed} e2e test(s) failed`);
};

// ---------------------------------------------------------------------------------
// Helpers for calling the extension's language model tools
// ---------------------------------------------------------------------------------

async function invokeTool(name, input) {
  const cts = new vscode.CancellationTokenSource();
  try {
    // toolInvocationToken undefined = invoked outside a chat request, as another
    // extension would; the tool must not require a chat context.
    return await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, cts.token);
  } finally {
    cts.dispose();
  }
}

// The first text part's value. Results cross the extension host/renderer boundary and
// are re-created on the way back, so check the shape rather than rely on instanceof.
function firstText(result, toolName) {
  assert(result && Array.isArray(result.content), `${toolName}: result has no content array: ${safeStringify(result)}`);
  const part = result.content.find(
    (p) => p instanceof vscode.LanguageModelTextPart || (p && typeof p.value === 'string'),
  );
  assert(part, `${toolName}: result has no LanguageModelTextPart (parts: ${safeStringify(result.content)})`);
  return part.value;
}

function parseJson(text, toolName) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AssertionError(`${toolName}: text part is not JSON (${err.message}): ${truncate(text)}`);
  }
}

// Invoke, take the text, parse it: [json, text].
async function callJson(name, input) {
  let result;
  try {
    result = await invokeTool(name, input);
  } catch (err) {
    throw new AssertionError(`${name}: vscode.lm.invokeTool threw: ${(err && err.message) || err}`);
  }
  const text = firstText(result, name);
  return [parseJson(text, name), text];
}

function assertOk(json, text, name) {
  assert(json && typeof json === 'object', `${name}: expected a JSON object, got ${truncate(text)}`);
  assert(json.ok !== false, `${name}: returned ok:false: ${truncate(text)}`);
}

function truncate(s, n = 600) {
  s = typeof s === 'string' ? s : safeStringify(s);
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

function safeStringify(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

// Every numeric leaf with its path, e.g. [['facts.total', 3]].
function numericLeaves(value, prefix = '', out = []) {
  if (typeof value === 'number' && Number.isFinite(value)) out.push([prefix || '(root)', value]);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) numericLeaves(v, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

// Decides which of `values` the JSON marks as current, without knowing the exact
// shape (still being designed). Looks for (a) a key named like "current" whose
// subtree mentions a value, (b) an object mentioning a value together with a
// current/active flag, a status, or a superseded/valid-to marker.
// Returns { current: Set, notCurrent: Set }.
function classifyCurrent(json, values) {
  const current = new Set();
  const notCurrent = new Set();
  const mentions = (v) => values.filter((x) => safeStringify(v).includes(x));

  const visit = (node, key) => {
    // Checked before the object test: `current: "Vite 9"` is a plain string.
    if (key && /^(current|currentFacts?|current_facts?|current_?value|latest|active)$/i.test(key)) {
      mentions(node).forEach((x) => current.add(x));
    }
    if (!node || typeof node !== 'object') return;
    if (key && /^(history|previous|superseded|past|versions)$/i.test(key) && Array.isArray(node)) {
      // Values only in history are old unless marked current elsewhere; resolved below.
      mentions(node).forEach((x) => notCurrent.add(`?${x}`));
    }
    if (!Array.isArray(node)) {
      const own = values.filter((x) =>
        Object.values(node).some((v) => typeof v === 'string' && v.includes(x)),
      );
      if (own.length === 1) {
        const flag = currentFlag(node);
        if (flag === true) current.add(own[0]);
        if (flag === false) notCurrent.add(own[0]);
      }
    }
    for (const [k, v] of Object.entries(node)) visit(v, Array.isArray(node) ? key : k);
  };
  visit(json, '');

  // "?x": seen in a history list; counts as not current only if nothing said current.
  for (const x of [...notCurrent]) {
    if (x.startsWith('?')) {
      notCurrent.delete(x);
      if (!current.has(x.slice(1))) notCurrent.add(x.slice(1));
    }
  }
  return { current, notCurrent };
}

function currentFlag(obj) {
  for (const [k, v] of Object.entries(obj)) {
    if (/^(is_?)?(current|active|latest)$/i.test(k) && typeof v === 'boolean') return v;
    if (/^(status|state)$/i.test(k) && typeof v === 'string') {
      if (/current|active|valid|latest/i.test(v) && !/invalid/i.test(v)) return true;
      if (/supersed|histor|replac|retract|invalid|old|expired|past/i.test(v)) return false;
    }
  }
  const ended = Object.keys(obj).find((k) =>
    /^(superseded_?by|superseded_?at|valid_?to|valid_?until|invalidated_?at|ended_?at|replaced_?by)$/i.test(k),
  );
  if (ended) return obj[ended] === null || obj[ended] === undefined;
  return undefined;
}

// ---------------------------------------------------------------------------------
// The tests (run in this order; later ones build on the store state of earlier ones)
// ---------------------------------------------------------------------------------

test('extension activates', async (info) => {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert(
    ext,
    `extension ${EXTENSION_ID} not found; non-builtin extensions: ${vscode.extensions.all
      .filter((e) => !e.id.startsWith('vscode.'))
      .map((e) => e.id)
      .join(', ') || '(none)'}`,
  );
  await ext.activate();
  assert(ext.isActive, `${EXTENSION_ID} did not become active`);
  info.vscodeVersion = vscode.version;
  info.extensionVersion = ext.packageJSON.version;
}, 60_000);

test('every contributed language model tool is registered', async (info) => {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert(ext, `extension ${EXTENSION_ID} not found`);
  const contributed = ((ext.packageJSON.contributes || {}).languageModelTools || []).map((t) => t.name);
  assert(contributed.length > 0, 'package.json contributes no languageModelTools');
  const registered = new Set(vscode.lm.tools.map((t) => t.name));
  const missing = contributed.filter((n) => !registered.has(n));
  assert(
    missing.length === 0,
    `contributed but missing from vscode.lm.tools: ${missing.join(', ')} (registered: ${[...registered].join(', ')})`,
  );
  info.tools = contributed;
});

test('remember stores a fact', async () => {
  const [json, text] = await callJson('remember', {
    statement: 'The build uses Vite 8',
    subject: 'build tool',
    predicate: 'is',
    object: 'Vite 8',
  });
  assert(json && json.ok === true, `remember: expected ok:true, got ${truncate(text)}`);
});

test('retrieve_memory finds the fact by subject', async () => {
  const [json, text] = await callJson('retrieve_memory', { subject: 'build tool' });
  assertOk(json, text, 'retrieve_memory');
  assert(text.includes('Vite 8'), `retrieve_memory: expected "Vite 8" in ${truncate(text)}`);
});

test('a newer value supersedes the old one and history keeps both', async (info) => {
  const [saved, savedText] = await callJson('remember', {
    statement: 'The build uses Vite 9',
    subject: 'build tool',
    predicate: 'is',
    object: 'Vite 9',
  });
  assert(saved && saved.ok === true, `remember (Vite 9): expected ok:true, got ${truncate(savedText)}`);

  const [hist, histText] = await callJson('retrieve_memory', { subject: 'build tool', include_history: true });
  assertOk(hist, histText, 'retrieve_memory(include_history)');
  assert(histText.includes('Vite 8'), `history should still contain "Vite 8": ${truncate(histText)}`);
  assert(histText.includes('Vite 9'), `history should contain "Vite 9": ${truncate(histText)}`);

  // Which one is current: first from markers in the history answer; if it has none we
  // can recognise, from the plain answer (which should show only current facts).
  const values = ['Vite 8', 'Vite 9'];
  const { current, notCurrent } = classifyCurrent(hist, values);
  if (current.size || notCurrent.size) {
    assert(
      current.has('Vite 9') && !current.has('Vite 8') && !notCurrent.has('Vite 9'),
      `history answer should mark "Vite 9" (only) as current; saw current=[${[...current]}] ` +
        `not-current=[${[...notCurrent]}] in ${truncate(histText)}`,
    );
    info.currentFrom = 'include_history answer';
    info.current = [...current];
    info.notCurrent = [...notCurrent];
  } else {
    const [plain, plainText] = await callJson('retrieve_memory', { subject: 'build tool' });
    assertOk(plain, plainText, 'retrieve_memory');
    assert(
      plainText.includes('Vite 9') && !plainText.includes('Vite 8'),
      'cannot tell the current value: the include_history answer has no current/superseded marker and the ' +
        `plain answer should show "Vite 9" but not "Vite 8"; plain: ${truncate(plainText)}; history: ${truncate(histText)}`,
    );
    info.currentFrom = 'plain answer (no markers in history answer)';
  }
});

test('search_text finds the fact', async () => {
  const [json, text] = await callJson('search_text', { query: 'Vite' });
  assertOk(json, text, 'search_text');
  assert(/Vite [89]/.test(text), `search_text: expected "Vite 8" or "Vite 9" in ${truncate(text)}`);
});

test('remember rejects a 4,001-character statement', async () => {
  const [json, text] = await callJson('remember', {
    statement: 'x'.repeat(4001),
    subject: 'oversized',
    predicate: 'is',
    object: 'too long',
  });
  assert(json && json.ok === false, `remember: expected ok:false for 4,001 chars, got ${truncate(text)}`);
  assert(
    typeof json.reason === 'string' && json.reason.length > 0,
    `remember: ok:false should come with a non-empty "reason": ${truncate(text)}`,
  );
});

test('memory_status reports numeric counts', async (info) => {
  const [json, text] = await callJson('memory_status', {});
  assertOk(json, text, 'memory_status');
  const numbers = numericLeaves(json);
  assert(numbers.length > 0, `memory_status: expected numeric counts in ${truncate(text)}`);
  info.counts = Object.fromEntries(numbers.slice(0, 12));
});
