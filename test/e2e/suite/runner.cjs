'use strict';
// The tiny runner every window's tests use: no mocha (a test framework would have to be
// resolvable from here and bundled or installed); a list of async functions run in order.
// Results go to a JSON file, rewritten after every test (atomically), so run.mjs can stream
// progress and still has partial results if something hangs.

const fs = require('fs');
const vscode = require('vscode');
const { AssertionError } = require('./driver.cjs');

const DEFAULT_TIMEOUT_MS = 30_000;

function withTimeout(promise, ms) {
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

/** `test(name, fn, timeoutMs)` registers; `runAll(file, only?)` runs them in order (the first, activation, always). */
function suite() {
  const tests = [];
  function test(name, fn, timeoutMs = DEFAULT_TIMEOUT_MS) {
    tests.push({ name, fn, timeoutMs });
  }
  async function runAll(resultsFile, only) {
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
    const chosen = only ? tests.filter((t, i) => i === 0 || only.test(t.name)) : tests;
    if (only) results.only = String(only);
    for (const t of chosen) {
      const started = Date.now();
      const entry = { name: t.name, ok: false };
      try {
        // Context shared with the test so it can attach details to the report.
        const info = {};
        await withTimeout(Promise.resolve().then(() => t.fn(info)), t.timeoutMs);
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
  return { test, runAll };
}

module.exports = { suite, writeResults };
