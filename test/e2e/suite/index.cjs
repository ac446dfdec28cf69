'use strict';
// End-to-end tests that run INSIDE a real VS Code extension host (code-server), loaded
// through the `extensionTestsPath` payload by test/e2e/run.mjs.
//
// CommonJS on purpose: VS Code loads the tests module with require(), and `vscode` is
// only resolvable through the extension host's require.
//
// Results go to the JSON file named by RECOLLECT_E2E_RESULTS (runner.cjs). The last test opens
// a second window on the same store, which runs secondWindow.cjs (twoWindows.cjs).

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

const EXTENSION_ID = 'recollect.recollect';

const { AssertionError, driver, sleep, until } = require('./driver.cjs');
const { suite, writeResults } = require('./runner.cjs');
const { assertOk, callJson, invokeTool, safeStringify, truncate } = require('./tools.cjs');

const { test, runAll } = suite();
const { requestScreenshot, requestClick } = driver(process.env.RECOLLECT_E2E_RESULTS);

function assert(condition, message) {
  if (!condition) throw new AssertionError(message);
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
    // RECOLLECT_E2E_ONLY (a regular expression over test names) runs a few tests, after the
    // activation they all need, for working on one case without the whole run.
    results = await runAll(resultsFile, process.env.RECOLLECT_E2E_ONLY ? new RegExp(process.env.RECOLLECT_E2E_ONLY) : undefined);
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

// Every numeric leaf with its path, e.g. [['facts.total', 3]].
function numericLeaves(value, prefix = '', out = []) {
  if (typeof value === 'number' && Number.isFinite(value)) out.push([prefix || '(root)', value]);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) numericLeaves(v, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
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

test('each Recollect tool is offered once, through one surface (no MCP copy beside the language-model tools)', async (info) => {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  const contributed = ext.packageJSON.contributes.languageModelTools.map((t) => t.name);
  const names = vscode.lm.tools.map((t) => t.name);
  const surface = vscode.workspace.getConfiguration('recollect').get('toolSurface');
  assert(surface === 'languageModelTools', `recollect.toolSurface defaults to languageModelTools, got ${surface}`);
  // VS Code names an MCP server's tools after the server (e.g. mcp_recollect_remember); give
  // its MCP client time to start a server the extension offered, then count every copy.
  await new Promise((r) => setTimeout(r, 3000));
  const copies = (tool) => vscode.lm.tools.filter((t) => t.name === tool || (t.name !== tool && t.name.endsWith(`_${tool}`) && /recollect/i.test(t.name))).length;
  const twice = contributed.filter((tool) => copies(tool) !== 1);
  assert(twice.length === 0, `offered other than once: ${twice.map((t) => `${t} (${copies(t)})`).join(', ')} among ${names.length} tools`);
  info.tools = vscode.lm.tools.length;
  info.hasDataPartJson = typeof (vscode.LanguageModelDataPart && vscode.LanguageModelDataPart.json) === 'function';
});

test('a tool answers with a JSON data part from VS Code 1.106, with text before', async (info) => {
  const result = await invokeTool('memory_status', {});
  const minor = Number(vscode.version.split('.')[1]);
  const json = result.content.filter((p) => p && /json/.test(p.mimeType || ''));
  const text = result.content.filter((p) => p && typeof p.value === 'string');
  if (minor >= 106) assert(json.length === 1 && text.length === 0, `VS Code ${vscode.version}: expected one JSON data part, got ${safeStringify(result.content).slice(0, 300)}`);
  else assert(text.length === 1 && json.length === 0, `VS Code ${vscode.version}: expected one text part, got ${safeStringify(result.content).slice(0, 300)}`);
  info.parts = result.content.map((p) => p.mimeType || 'text');
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

  const byObject = Object.fromEntries((hist.values || []).map((v) => [v.object, v.status]));
  assert(byObject['Vite 9'] === 'current' && byObject['Vite 8'] === 'historical', `expected Vite 9 current and Vite 8 historical: ${truncate(histText)}`);
  info.values = byObject;
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

test('search_memory finds a memory by meaning with the bundled model, run in a worker of the extension host', async (info) => {
  const [saved, savedText] = await callJson('remember', { statement: 'The car is parked on level 3 of the garage on Elm Street' });
  assertOk(saved, savedText, 'remember');
  const [json, text] = await callJson('search_memory', { query: 'where did I leave my automobile?', top_k: 3 });
  assertOk(json, text, 'search_memory');
  assert(json.semantic === true && /^use-lite/.test(json.model), `search_memory: expected the bundled model to answer, got ${truncate(text)}`);
  assert(json.hits[0] && /car is parked/.test(json.hits[0].text), `search_memory: expected the parked car first, got ${truncate(text)}`);
  info.model = json.model;
}, 120_000);

test('chat sessions placed where VS Code and Claude Code keep them are imported and chat_history lists them', async (info) => {
  const fixtures = process.env.RECOLLECT_E2E_FIXTURES;
  assert(fixtures && fs.existsSync(fixtures), `transcript fixtures not found (RECOLLECT_E2E_FIXTURES=${fixtures})`);
  const api = vscode.extensions.getExtension(EXTENSION_ID).exports;
  const { workspaceStorage } = api.vscodeStorage();
  const chatDir = path.join(workspaceStorage, 'e2e-workspace', 'chatSessions');
  fs.mkdirSync(chatDir, { recursive: true });
  fs.copyFileSync(path.join(fixtures, 'copilot-export', 'dealenx_chat_succes_mcp.json'), path.join(chatDir, 'e2e-session.json'));
  const claudeDir = path.join(process.env.HOME, '.claude', 'projects', 'e2e-project');
  fs.mkdirSync(claudeDir, { recursive: true });
  fs.copyFileSync(path.join(fixtures, 'claude-code', 'project-a', 'c8bcb3a7-8728-4d76-9aae-1cbaf2350114.jsonl'), path.join(claudeDir, 'c8bcb3a7-8728-4d76-9aae-1cbaf2350114.jsonl'));

  const report = await api.importNow();
  info.report = { files: report.files, sessions: report.sessions, events: report.events, problems: report.problems.length };
  assert(report.sessions >= 2, `expected both sessions imported: ${safeStringify(report)}`);

  const [list, text] = await callJson('chat_history', { mode: 'list' });
  assertOk(list, text, 'chat_history');
  assert(list.session && list.session.source === 'vscode-chat', `Copilot's "this session" should be the VS Code chat session: ${truncate(text)}`);
  assert(Array.isArray(list.runs) && list.runs.length > 0 && list.runs.every((r) => typeof r.task_id === 'string'), `expected runs with task_id: ${truncate(text)}`);
  const [read, readText] = await callJson('chat_history', { mode: 'read', task_id: list.runs[0].task_id });
  assertOk(read, readText, 'chat_history read');
  info.runs = list.runs.length;
  const [found, foundText] = await callJson('chat_history', { mode: 'search', query: 'sleep' });
  assertOk(found, foundText, 'chat_history search');
  info.searchTotal = found.total;
}, 60_000);

test('Copilot is the named connection "copilot": an agent on the same store addresses a request to it and whats_new shows it, marked untrusted', async (info) => {
  const [first, firstText] = await callJson('whats_new', {});
  assertOk(first, firstText, 'whats_new');
  assert(first.connection === 'copilot', `expected the connection "copilot" (recollect.connectionName default): ${truncate(firstText)}`);
  // Another process on the same store (the CLI, as connection "cli") leaves a request for Copilot.
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  const cli = path.join(ext.extensionPath, 'dist', 'cli.js');
  // Asynchronously: this window owns the store, so the CLI is its client and needs this
  // extension host's event loop free to answer it.
  const { stdout: out } = await require('util').promisify(require('child_process').execFile)(process.execPath, [cli, 'tool', 'ask_agent', JSON.stringify({ to: 'copilot', request: 'Please confirm the build passes' })], { encoding: 'utf8', env: process.env });
  const asked = JSON.parse(out);
  assert(asked.ok === true && asked.to === 'copilot', `ask_agent from the CLI failed: ${truncate(out)}`);
  const [news, newsText] = await callJson('whats_new', {});
  assertOk(news, newsText, 'whats_new');
  const open = (news.open_requests || []).find((r) => r.id === asked.id);
  assert(open && open.from === 'cli' && open.request.untrusted === true, `expected the CLI's request first, marked untrusted: ${truncate(newsText)}`);
  info.openRequests = news.open_requests.length;
});

// ---------------------------------------------------------------------------------
// Command palette, language server, memory browser
// ---------------------------------------------------------------------------------

test('every contributed command is registered, and palette commands run', async (info) => {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  const contributed = ((ext.packageJSON.contributes || {}).commands || []).map((c) => c.command);
  const registered = new Set(await vscode.commands.getCommands(true));
  const missing = contributed.filter((c) => !registered.has(c));
  assert(missing.length === 0, `contributed but not registered: ${missing.join(', ')}`);

  const status = await vscode.commands.executeCommand('recollect.showStatus');
  assert(status && status.ok === true && status.facts >= 2 && typeof status.bytes === 'number' && status.bytes > 0, `recollect.showStatus: ${safeStringify(status)}`);
  const line = await vscode.commands.executeCommand('recollect.copyMcpCommand');
  const cli = path.join(ext.extensionPath, 'dist', 'cli.js');
  assert(typeof line === 'string' && line.includes(cli) && line.includes(`RECOLLECT_HOME=${process.env.RECOLLECT_HOME}`) && line.endsWith(' mcp'), `copyMcpCommand: ${line}`);
  const rebuilt = await vscode.commands.executeCommand('recollect.rebuildIndex');
  assert(rebuilt && rebuilt.skippedLines === 0 && rebuilt.facts === status.facts, `rebuildIndex: ${safeStringify(rebuilt)} (status had ${status.facts} facts)`);
  // The tools this suite called above are in the activity log, not in the history.
  const activity = await vscode.commands.executeCommand('recollect.showActivity');
  assert(activity && Array.isArray(activity.rows) && activity.rows.some((r) => r.tool === 'remember'), `recollect.showActivity: ${truncate(safeStringify(activity))}`);
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  info.commands = contributed.length;
  info.rebuildMs = rebuilt.ms;
  info.activityRows = activity.rows.length;
});

test('the notes language server starts for a vault note and answers with the extension host\'s memory', async (info) => {
  const vault = path.join(process.env.RECOLLECT_HOME, 'vault', 'e2e');
  fs.mkdirSync(vault, { recursive: true });
  const file = path.join(vault, 'language-server.md');
  fs.writeFileSync(file, '---\ndate: 2999-01-01\n---\nWe build with the build tool.\nA bell \u0007 and fact:nosuchfact00000.\nLink: [[bui\n');
  const doc = await vscode.workspace.openTextDocument(file);
  await vscode.window.showTextDocument(doc);

  const codes = await until('diagnostics from the language server', () => {
    const found = vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'recollect').map((d) => String(typeof d.code === 'object' ? d.code.value : d.code));
    return found.length >= 3 ? found.sort() : undefined;
  }, 30_000);
  assert(codes.join() === 'control-character,future-date,unknown-id', `diagnostics: ${codes.join()}`);

  const completions = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', doc.uri, new vscode.Position(5, 11));
  const labels = completions.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
  assert(labels.includes('build tool'), `completion at [[bui: ${labels.slice(0, 20).join(', ')}`);

  const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, new vscode.Position(3, 20));
  const hoverText = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
  assert(hoverText.includes('Vite 9') && hoverText.includes('Vite 8'), `hover on "build tool": ${truncate(hoverText)}`);
  info.diagnostics = codes;
  info.completions = labels.length;
}, 60_000);

test('the getting-started walkthrough opens with its steps (screenshot)', async (info) => {
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${EXTENSION_ID}#recollect.gettingStarted`, false);
  await sleep(2000);
  const shot = await requestScreenshot('walkthrough', 'Connect Claude Code, Codex and other agents');
  assert(shot.found === true, `the walkthrough's step is not on screen (${shot.file})`);
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  info.screenshot = shot.file;
}, 40_000);

test('the memory browser opens from the palette and shows the seeded facts (screenshot)', async (info) => {
  await vscode.commands.executeCommand('recollect.showMemory');
  // The webview loads, then asks the host for the newest memories; the runner looks for one.
  let shot;
  for (let i = 0; i < 5; i++) {
    await sleep(1500);
    shot = await requestScreenshot('memory-browser', 'Vite 9');
    if (shot.found) break;
  }
  assert(shot.found === true, `the memory browser does not show the seeded fact "Vite 9" (${shot.file})`);
  info.screenshot = shot.file;
}, 60_000);

// ---------------------------------------------------------------------------------
// Session history and rule approval (webview panels)
// ---------------------------------------------------------------------------------

test('the session-history panel opens on a fixture session, and Continue with chapters on an assistant row archives up to it and opens the next session or its fallback (screenshot)', async (info) => {
  const api = vscode.extensions.getExtension(EXTENSION_ID).exports;
  const s = await api.services;
  // The Claude Code fixture imported above; the newest session of that kind.
  const session = s.history.currentSession({ client: 'claude-code' });
  assert(session && session.source === 'claude-code', `no imported Claude Code session: ${safeStringify(session)}`);
  const ceiling = s.chapters.ceiling(session.id);
  assert(ceiling.ok === true && ceiling.archiveCeiling > 0, `nothing archivable in ${session.id}: ${safeStringify(ceiling)}`);
  const found = s.store.db.exec("SELECT seq FROM events WHERE session_id = ? AND kind = 'assistant' AND seq <= ? ORDER BY seq DESC LIMIT 1", [session.id, ceiling.archiveCeiling]);
  const seq = found[0] && Number(found[0].values[0][0]);
  assert(seq > 0, `no assistant row at or below the ceiling ${ceiling.archiveCeiling} in ${session.id}`);
  const before = s.chapters.childrenOf(session.id).length;
  await vscode.env.clipboard.writeText('');

  await vscode.commands.executeCommand('recollect.openSessionHistory', { sessionId: session.id, seq });
  const click = await requestClick(`button[data-action="continue"][data-seq="${seq}"]`);

  const child = await until('the child session recorded by the click', () => {
    const children = s.chapters.childrenOf(session.id);
    return children.length > before ? children[0] : undefined;
  }, 30_000);
  assert(child.intent === 'continue' && child.uptoSeq === seq, `expected a continue child up to seq ${seq}: ${safeStringify(child)}`);
  const chapters = s.chapters.chaptersOf(session.id);
  assert(chapters.length > 0 && Math.max(...chapters.map((c) => c.endSeq)) === seq, `chapters stored should end at seq ${seq}: ${safeStringify(chapters)}`);
  const first = s.chapters.firstMessageOf(child.id);
  assert(first && first.firstMessage.includes(first.marker), `the child's first message should carry its marker: ${safeStringify(first)}`);

  // Without a chat extension, code-server cannot open a chat: the table of contents goes to the clipboard.
  const clipboard = await until('the first message on the clipboard', async () => {
    const text = await vscode.env.clipboard.readText();
    return text ? text : undefined;
  }, 10_000).catch(() => '');
  const shot = await requestScreenshot('session-history-continue', 'copied to the clipboard');
  assert(shot.found === true, `the panel does not show the fallback outcome (${shot.file})`);
  if (clipboard) assert(clipboard === first.firstMessage, `the clipboard holds something else than the first message: ${truncate(clipboard)}`);
  info.session = session.id;
  info.uptoSeq = seq;
  info.chapters = chapters.map((c) => `${c.id} ${c.startSeq}-${c.endSeq} (${c.tokens} tokens)`);
  info.child = child.id;
  info.clipboard = clipboard ? `the first message (${clipboard.length} chars)` : 'not readable here';
  info.clickedIn = click.frame;
  info.screenshot = shot.file;
}, 120_000);

test('the rule-approval panel lists a rule an agent proposed (screenshot)', async (info) => {
  const [proposed, text] = await callJson('chapters_rule_propose', { text: 'Run the e2e suite before tagging a release.', category: 'testing', rationale: 'a release shipped with a broken panel' });
  assert(proposed.ok === true, `chapters_rule_propose: ${truncate(text)}`);
  await vscode.commands.executeCommand('recollect.reviewRules');
  let shot;
  for (let i = 0; i < 5; i++) {
    await sleep(1500);
    shot = await requestScreenshot('rule-approval', 'Run the e2e suite before tagging a release.');
    if (shot.found) break;
  }
  assert(shot.found === true, `the rule-approval panel does not show the proposed rule (${shot.file})`);
  const s = await vscode.extensions.getExtension(EXTENSION_ID).exports.services;
  assert(s.rules.view(proposed.id).status === 'pending', 'opening the panel must not decide anything');
  info.rule = proposed.id;
  info.screenshot = shot.file;
}, 60_000);

test('the memory browser shows an error with its fix, a rule and an imported session from the store (screenshot)', async (info) => {
  const fix = 'Pinned react to 18.3.1 in package.json';
  const [written, text] = await callJson('write_error', { tool_name: 'npm', keywords: ['eresolve', 'react'], symptom: 'npm install failed with ERESOLVE on react 19', cause: 'a peer dependency on react 18', action: fix, outcome: 'resolved' });
  assert(written.ok === true && written.recorded === true, `write_error: ${truncate(text)}`);
  const s = await vscode.extensions.getExtension(EXTENSION_ID).exports.services;
  const rule = s.rules.list()[0];
  assert(rule, 'no rule in the store: the rule-approval test above proposes one');
  const newest = s.store.db.exec("SELECT coalesce(title, '(untitled session)') FROM sessions WHERE source = 'claude-code' ORDER BY coalesce(updated_at, started_at, 0) DESC LIMIT 1");
  const sessionTitle = newest[0] && String(newest[0].values[0][0]);
  assert(sessionTitle, 'no imported Claude Code session in the store');

  await vscode.commands.executeCommand('recollect.showMemory');
  // The view follows the store (it polls while visible); fold Recent so the sections are on screen.
  let shot;
  for (let i = 0; i < 8 && !(shot && shot.found); i++) {
    await sleep(1500);
    shot = await requestScreenshot('memory-browser-sections', fix);
  }
  assert(shot.found === true, `the memory browser does not show the fix "${fix}" (${shot.file})`);
  await requestClick('[data-section="recent"] .section-toggle[aria-expanded="true"]');
  await sleep(500);
  shot = await requestScreenshot('memory-browser-sections', fix);
  assert(shot.found === true, `the fix is gone after folding Recent (${shot.file})`);
  const ruleShot = await requestScreenshot('memory-browser-sections', rule.text);
  assert(ruleShot.found === true, `the memory browser does not show the rule "${rule.text}"`);
  const sessionShot = await requestScreenshot('memory-browser-sections', sessionTitle.slice(0, 60));
  assert(sessionShot.found === true, `the memory browser does not show the session "${sessionTitle}"`);
  await requestClick('[data-section="recent"] .section-toggle[aria-expanded="false"]');
  info.rule = rule.id;
  info.session = sessionTitle.slice(0, 80);
  info.screenshot = shot.file;
}, 90_000);

test('Export Memory… writes the whole memory as Markdown (hidden test argument: a target path instead of the save dialog)', async (info) => {
  const target = path.join(process.env.RECOLLECT_HOME, 'e2e-export.md');
  const out = await vscode.commands.executeCommand('recollect.exportMemory', { target });
  assert(out && out.ok === true && out.file === target, `recollect.exportMemory: ${safeStringify(out)}`);
  const doc = fs.readFileSync(target, 'utf8');
  assert(Buffer.byteLength(doc) === out.bytes, `the file holds ${Buffer.byteLength(doc)} bytes, the command said ${out.bytes}`);
  assert(doc.includes('Vite 9') && doc.includes('Vite 8'), `the export should hold the fact ledger with its history: ${truncate(doc)}`);
  info.bytes = out.bytes;
  info.pages = out.pages;
}, 60_000);

test('the sidebar memory browser in a light theme (screenshot)', async (info) => {
  const workbench = vscode.workspace.getConfiguration('workbench');
  await workbench.update('colorTheme', 'Default Light Modern', vscode.ConfigurationTarget.Global);
  try {
    await until('a light colour theme', () => vscode.window.activeColorTheme.kind === vscode.ColorThemeKind.Light, 15_000);
    await vscode.commands.executeCommand('recollect.showMemory');
    let shot;
    for (let i = 0; i < 5 && !(shot && shot.found); i++) {
      await sleep(1500);
      shot = await requestScreenshot('memory-browser-light', 'Vite 9');
    }
    assert(shot.found === true, `the memory browser in the light theme does not show the seeded fact "Vite 9" (${shot.file})`);
    info.theme = vscode.workspace.getConfiguration('workbench').get('colorTheme');
    info.screenshot = shot.file;
  } finally {
    await workbench.update('colorTheme', undefined, vscode.ConfigurationTarget.Global);
  }
}, 60_000);

// Registered last: it imports a newer Claude Code session, which the tests above must not see.
require('./chatHistoryWithheld.cjs')({ test, assert, callJson, assertOk, truncate, safeStringify, until, EXTENSION_ID });

// What invoking a Recollect tool by its own name does now: 'answered', or 'refused: <why>'.
async function plainInvocation(name) {
  return Promise.race([
    invokeTool(name, {}).then(() => 'answered', (err) => `refused: ${(err && err.message) || err}`),
    new Promise((r) => setTimeout(() => r('no answer in 8 s'), 8000)),
  ]);
}

// Last: it starts a second process on the store (VS Code's MCP client runs the server), so no
// test after it depends on what that process did.
test('with recollect.toolSurface = mcp the language-model tools are unregistered, the MCP server is offered, and each tool comes from it once', async (info) => {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  const contributed = ext.packageJSON.contributes.languageModelTools.map((t) => t.name);
  // VS Code names an MCP server's tools after the server (e.g. mcp_recollect_remember).
  const mcpCopies = (tool) => vscode.lm.tools.filter((t) => t.name !== tool && t.name.endsWith(`_${tool}`) && /recollect/i.test(t.name));
  const config = () => vscode.workspace.getConfiguration('recollect');
  const minor = Number(vscode.version.split('.')[1]);
  await config().update('toolSurface', 'mcp', vscode.ConfigurationTarget.Global);
  try {
    if (minor < 101) {
      // No MCP server definition API (1.100): the setting cannot take effect, and the tools stay.
      await new Promise((r) => setTimeout(r, 2000));
      const answer = await plainInvocation('memory_status');
      assert(answer === 'answered', `VS Code ${vscode.version} has no MCP definition API, yet memory_status no longer answers: ${answer}`);
      info.surface = 'languageModelTools (no MCP definition API)';
      return;
    }
    // vscode.lm.tools keeps listing contributed tools whatever their `when` says (the model's
    // list honours it), so "unregistered" is seen as: calling one by its own name is refused.
    let answer;
    const until = Date.now() + 20_000;
    while ((answer = await plainInvocation('memory_status')) === 'answered' && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
    assert(answer.startsWith('refused'), `memory_status still answers as a language-model tool on the MCP surface (${answer})`);
    info.plainCall = truncate(answer, 160);
    // Start every MCP server VS Code knows (ours is the only one here) and wait for its tools;
    // VS Code asks the provider for the definition again only after the change, so until it
    // has, there is nothing to start and the command is repeated.
    const allOnce = () => contributed.every((tool) => mcpCopies(tool).length === 1);
    const deadline = Date.now() + 60_000;
    let starts = 0;
    while (!allOnce() && Date.now() < deadline) {
      starts++;
      await Promise.race([
        vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true, autoTrustChanges: true }),
        new Promise((r) => setTimeout(r, 10_000)),
      ]);
      if (!allOnce()) await new Promise((r) => setTimeout(r, 1000));
    }
    const missing = contributed.filter((tool) => mcpCopies(tool).length !== 1);
    assert(
      missing.length === 0,
      `not offered once by Recollect's MCP server after ${starts} start(s): ${missing.join(', ')} (tools named recollect: ${vscode.lm.tools.map((t) => t.name).filter((n) => /recollect/i.test(n)).join(', ') || 'none'})`,
    );
    info.starts = starts;
    info.mcpTools = contributed.slice(0, 3).map((tool) => mcpCopies(tool)[0].name);
    info.surface = 'mcp';
  } finally {
    // Back to the default surface, which the tests after this one call tools through.
    await config().update('toolSurface', undefined, vscode.ConfigurationTarget.Global);
    const until = Date.now() + 20_000;
    while ((await plainInvocation('memory_status')) !== 'answered' && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
  }
  assert((await plainInvocation('memory_status')) === 'answered', 'the language-model tools did not come back with the default surface');
}, 150_000);

// Last of all: once this window's tests are done, run.mjs closes it and the second window takes the store over.
require('./twoWindows.cjs')({ test, assert, callJson, assertOk, truncate, safeStringify, until, requestScreenshot, EXTENSION_ID });
