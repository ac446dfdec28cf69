'use strict';
// A second VS Code window on the store the first window owns: run.mjs opens it as another page
// of the same code-server when twoWindows.cjs asks, and this module runs in that page's own
// extension host. Its results go to <RECOLLECT_E2E_RESULTS>.second; what it exchanges with the
// first window is described in twoWindows.cjs. Its last test runs after run.mjs closed the
// first window.

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { AssertionError, driver, sleep, until } = require('./driver.cjs');
const { suite, writeResults } = require('./runner.cjs');
const { assertOk, callJson, safeStringify, truncate } = require('./tools.cjs');

const EXTENSION_ID = 'recollect.recollect';
const RESULTS = `${process.env.RECOLLECT_E2E_RESULTS}.second`;
const FIRST = `${process.env.RECOLLECT_E2E_RESULTS}.first-window.json`;
const SECOND = `${process.env.RECOLLECT_E2E_RESULTS}.second-window.json`;
const HOME = process.env.RECOLLECT_HOME;
/** The store's own files a holder keeps open; a client window has none of them. */
const STORE_FILES = /\/(journal\.jsonl|store\.sqlite|journal\.lock)$/;

const { test, runAll } = suite();
const { requestScreenshot, requestClick } = driver(RESULTS);

function assert(condition, message) {
  if (!condition) throw new AssertionError(message);
}

/** Files this extension host has open (Linux). */
function openFiles() {
  const fds = '/proc/self/fd';
  return fs.readdirSync(fds).map((fd) => {
    try {
      return fs.readlinkSync(path.join(fds, fd));
    } catch {
      return '';
    }
  });
}

/** The pid the store's owner.lock names (its first word). */
const claimPid = () => Number(fs.readFileSync(path.join(HOME, 'owner.lock'), 'utf8').split(' ')[0]);

async function status() {
  const [json, text] = await callJson('memory_status', {});
  assertOk(json, text, 'memory_status');
  return json.store_owner;
}

async function shows(name, text) {
  let shot;
  for (let i = 0; i < 8 && !(shot && shot.found); i++) {
    await sleep(1500);
    shot = await requestScreenshot(name, text);
  }
  return shot;
}

let first;
const mine = { pid: process.pid };

test('extension activates as a client of the first window: no database of its own, owner.lock names the first window', async (info) => {
  first = JSON.parse(await until('the first window\'s note', () => (fs.existsSync(FIRST) ? fs.readFileSync(FIRST, 'utf8') : undefined), 10_000));
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  await ext.activate();
  assert(process.pid !== first.pid, `this page runs in the first window's extension host (${process.pid})`);
  // A tool call waits for the election this window joined at activation; the role is settled after it.
  const owner = await status();
  assert(owner.this_process === 'client' && owner.owner.pid === first.pid && owner.pid === process.pid, `memory_status: ${safeStringify(owner)}`);
  const role = ext.exports.storeRole();
  assert(role.this_process === 'client' && role.owner.pid === first.pid && role.owner.kind === 'vscode', `expected a client of window ${first.pid}: ${safeStringify(role)}`);
  const shown = await vscode.commands.executeCommand('recollect.showStatus');
  assert(shown.store_owner.this_process === 'client' && shown.store_owner.owner.pid === first.pid, `Show Memory Status: ${safeStringify(shown.store_owner)}`);
  assert(claimPid() === first.pid, `owner.lock names ${claimPid()}, not the first window ${first.pid}`);
  const held = openFiles().filter((f) => f.startsWith(HOME) && STORE_FILES.test(f));
  assert(held.length === 0, `a client window holds store files open: ${held.join(', ')}`);
  info.firstWindow = first.pid;
  info.thisWindow = process.pid;
}, 60_000);

test('finds what the first window wrote, writes through a tool, and its memory browser shows the first window\'s fact', async (info) => {
  const [got, gotText] = await callJson('retrieve_memory', { subject: first.fact.subject });
  assertOk(got, gotText, 'retrieve_memory');
  assert(gotText.includes(first.fact.object), `the first window's fact is not found here: ${truncate(gotText)}`);
  const tag = Date.now().toString(36);
  mine.fact = { statement: `The second window's standup is in room ${tag}`, subject: `standup room ${tag}`, predicate: 'is in', object: `room ${tag}` };
  const [written, writtenText] = await callJson('remember', mine.fact);
  assert(written.ok === true, `remember in the second window: ${truncate(writtenText)}`);
  await vscode.commands.executeCommand('recollect.showMemory');
  const shot = await shows('second-window-memory', first.fact.statement);
  assert(shot.found === true, `this window's memory browser does not show the first window's fact (${shot.file})`);
  info.screenshot = shot.file;
}, 60_000);

test('chapters_continue called here archives in the first window\'s store and offers the next session in this window, not in the first', async (info) => {
  const [segment, segmentText] = await callJson('chapters_segment', { sessionId: first.sessionId });
  assertOk(segment, segmentText, 'chapters_segment');
  const chapters = segment.ranges.map(({ startSeq, endSeq, title, summary }) => ({ startSeq, endSeq, title, summary }));
  // Empty when the first window's tests archived the session up to its ceiling already: the next session carries those.
  assert(chapters.length > 0 || segment.existingChapters.length > 0, `nothing archived or to archive in ${first.sessionId}: ${truncate(segmentText)}`);
  const [continued, text] = await callJson('chapters_continue', { sessionId: first.sessionId, chapters, handoffNote: 'carry on from the second window' });
  assert(continued.ok === true && /^offered/.test(continued.opened.how), `chapters_continue: ${truncate(text)}`);
  mine.continued = continued.childSessionId;
  // The offer is a notification of this window: seen in its notification list (headless code-server
  // 4.139.1 draws no toast, only the alert it raises for screen readers); in the first window it is
  // nowhere on the page, hidden or not.
  await vscode.commands.executeCommand('notifications.showList');
  let here;
  for (let i = 0; i < 6 && !(here && here.found); i++) {
    await sleep(500);
    here = await requestScreenshot('second-window-next-session', 'the next session is ready', { visible: true });
  }
  await vscode.commands.executeCommand('notifications.hideList');
  assert(here.found === true, `this window's notifications do not offer the next session (${here.file})`);
  const there = await requestScreenshot('first-window-no-offer', 'the next session is ready', { page: 'first' });
  assert(there.found === false, `the first window offers the next session this window asked for (${there.file})`);
  info.child = continued.childSessionId;
  info.screenshots = [here.file, there.file];
}, 60_000);

test('Continue with chapters in this window\'s Session History archives in the first window\'s store and opens the next session here or falls back to the clipboard', async (info) => {
  await vscode.env.clipboard.writeText('');
  await vscode.commands.executeCommand('recollect.openSessionHistory', { sessionId: first.sessionId, seq: first.seq });
  const click = await requestClick(`button[data-action="continue"][data-seq="${first.seq}"]`);
  const shot = await shows('second-window-session-history', 'copied to the clipboard');
  assert(shot.found === true, `the panel does not show the fallback outcome (${shot.file})`);
  const clipboard = await vscode.env.clipboard.readText().catch(() => '');
  if (clipboard) assert(/ses_[0-9a-f]{16}/.test(clipboard), `the clipboard holds something else than a first message: ${truncate(clipboard)}`);
  // Tell the first window what this one did; it checks its store and its own views, then closes.
  fs.writeFileSync(`${SECOND}.tmp`, JSON.stringify(mine));
  fs.renameSync(`${SECOND}.tmp`, SECOND);
  info.clickedIn = click.frame;
  info.clipboard = clipboard ? `${clipboard.length} chars` : 'not readable here';
  info.screenshot = shot.file;
}, 90_000);

test('when the first window closes, this window takes the store over: owner.lock names it, everything both wrote is there, writes go on', async (info) => {
  // The first window's extension host ends when its tests end: VS Code's test support sends it the
  // terminate message a closing window sends (its deactivate closes the store link), and run.mjs
  // then closes its page. Its results say when its tests ended.
  const firstDone = () => {
    try {
      const r = JSON.parse(fs.readFileSync(process.env.RECOLLECT_E2E_RESULTS, 'utf8'));
      return r.done ? r : undefined;
    } catch {
      return undefined;
    }
  };
  const closedAt = Date.parse((await until('the first window\'s tests to end', firstDone, 120_000)).finishedAt);
  await until('owner.lock to name this window', () => {
    try {
      return claimPid() === process.pid;
    } catch {
      return false; // between the old claim's removal and the new one
    }
  }, 60_000);
  // From the end of the first window's tests to the claim naming this window (polled every 200 ms).
  const tookOver = Date.now() - closedAt;
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  await until('this window to be the owner', () => ext.exports.storeRole().this_process === 'owner', 20_000);
  const owner = await status();
  assert(owner.this_process === 'owner' && owner.owner.pid === process.pid, `memory_status after the takeover: ${safeStringify(owner)}`);
  const shown = await vscode.commands.executeCommand('recollect.showStatus');
  assert(shown.store_owner.this_process === 'owner', `Show Memory Status after the takeover: ${safeStringify(shown.store_owner)}`);
  assert(openFiles().some((f) => f.startsWith(HOME) && STORE_FILES.test(f)), 'the new owner holds none of the store files open');
  for (const f of [first.fact, mine.fact]) {
    const [got, gotText] = await callJson('retrieve_memory', { subject: f.subject });
    assertOk(got, gotText, 'retrieve_memory');
    assert(gotText.includes(f.object), `"${f.statement}", acknowledged before the first window closed, is lost: ${truncate(gotText)}`);
  }
  const after = { statement: `Written after the takeover ${Date.now().toString(36)}`, subject: `takeover ${process.pid}`, predicate: 'is', object: 'kept' };
  const [written, writtenText] = await callJson('remember', after);
  assert(written.ok === true, `remember after the takeover: ${truncate(writtenText)}`);
  const [segment, segmentText] = await callJson('chapters_segment', { sessionId: first.sessionId });
  assertOk(segment, segmentText, 'chapters_segment');
  assert(segment.existingChapters.length > 0, `the chapters archived before the takeover are gone: ${truncate(segmentText)}`);
  await vscode.commands.executeCommand('recollect.showMemory');
  const shot = await shows('second-window-after-takeover', first.fact.statement);
  assert(shot.found === true, `after the takeover the memory browser does not show the first window's fact (${shot.file})`);
  info.tookOverMs = tookOver;
  info.screenshot = shot.file;
}, 150_000);

exports.run = async function run() {
  let results;
  try {
    results = await runAll(RESULTS);
  } catch (err) {
    writeResults(RESULTS, { done: true, fatal: String((err && err.stack) || err), tests: [] });
    throw err;
  }
  if (results.failed > 0) throw new Error(`${results.failed} e2e test(s) failed in the second window`);
};
