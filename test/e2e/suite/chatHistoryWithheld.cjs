'use strict';
// chat_history mode=read's `withheld` field in a real extension host, through vscode.lm.invokeTool.
// Withholding needs a language model; code-server (like a VS Code without Copilot) offers none,
// so these pin what the answer says when it cannot have one: nothing withheld, and why.
// Registered by index.cjs, whose runner and helpers they use.

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

module.exports = function register({ test, assert, callJson, assertOk, truncate, safeStringify, until, EXTENSION_ID }) {
  const WITHHOLD_SETTING = 'history.withholdUnrelatedRuns';

  async function setWithholding(on) {
    await vscode.workspace.getConfiguration('recollect').update(WITHHOLD_SETTING, on, vscode.ConfigurationTarget.Global);
    await until(`recollect.${WITHHOLD_SETTING} = ${on}`, () => vscode.workspace.getConfiguration('recollect').get(WITHHOLD_SETTING) === on, 10_000);
  }

  /**
   * Reads "this session"'s runs together with the imported Claude Code session's (at most 16, the
   * tool's limit) in one mode=read call and checks each came back in full. The other session's
   * runs are what a model would be asked about: they are not the current request's run.
   */
  async function readRunsInFull(info) {
    const [list, listText] = await callJson('chat_history', { mode: 'list', limit: 8 });
    assertOk(list, listText, 'chat_history list');
    const s = await vscode.extensions.getExtension(EXTENSION_ID).exports.services;
    const other = s.history.currentSession({ client: 'claude-code' });
    assert(other, 'no imported Claude Code session: the import test above places one');
    const own = new Set((list.runs || []).map((r) => r.task_id));
    const ids = [...own, ...s.history.listRuns(other.id, 8).map((r) => r.task_id)];
    assert(ids.length > own.size, `expected runs from both sessions: ${ids.join()}`);
    const started = Date.now();
    const [read, text] = await callJson('chat_history', { mode: 'read', task_id: ids });
    info.readMs = Date.now() - started;
    assertOk(read, text, 'chat_history read');
    const runs = read.runs || [];
    assert(runs.map((r) => r.task_id).join() === ids.join(), `expected the runs ${ids.join()} in order, got ${runs.map((r) => r.task_id).join()}`);
    const notes = runs.filter((r) => r.withheld === true || !Array.isArray(r.events));
    assert(notes.length === 0, `runs replaced by a note although nothing may be withheld: ${truncate(notes)}`);
    const w = read.withheld;
    assert(w && w.checked === false && typeof w.reason === 'string' && /nothing was withheld/.test(w.reason), `withheld should say nothing was withheld and why: ${truncate(w)}`);
    assert(!w.ids || w.ids.length === 0, `withheld.ids should be empty: ${truncate(w)}`);
    info.runs = ids.length;
    // At or over withholding's size threshold (WITHHOLD_MIN_CHARS, measured the same way).
    info.longRuns = runs.filter((r) => JSON.stringify(r).length >= 4096).map((r) => r.task_id);
    // Long runs of the other session: the ones a model would be asked about, had there been one.
    info.judgeable = info.longRuns.filter((id) => !own.has(id));
    info.reason = w.reason;
    return w;
  }

  test('chat_history mode=read with recollect.history.withholdUnrelatedRuns off returns every run in full and the withheld field says nothing was withheld because the setting is off', async (info) => {
    // A Claude Code session with a run of 4,096 characters or more. Imported only now, at the end
    // of the suite: it becomes the newest Claude Code session, which earlier tests look up.
    const fixture = 'b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl';
    const claudeDir = path.join(process.env.HOME, '.claude', 'projects', 'e2e-project');
    fs.copyFileSync(path.join(process.env.RECOLLECT_E2E_FIXTURES, 'claude-code', 'project-a', fixture), path.join(claudeDir, fixture));
    const report = await vscode.extensions.getExtension(EXTENSION_ID).exports.importNow();
    assert(report.sessions >= 1 && report.problems.length === 0, `importing ${fixture}: ${safeStringify(report)}`);
    await setWithholding(false);
    const w = await readRunsInFull(info);
    assert(w.reason.includes(`recollect.${WITHHOLD_SETTING} is off`), `the reason should name the setting being off: ${w.reason}`);
  }, 60_000);

  test('chat_history mode=read with the setting on but no language model in this VS Code says no model is available, asks no consent and returns every run in full', async (info) => {
    // Nothing offers a chat model in code-server; if one ever does, this test no longer shows the no-model path.
    const models = await vscode.lm.selectChatModels();
    assert(models.length === 0, `this VS Code offers chat models (${models.map((m) => `${m.vendor}/${m.id}`).join(', ')}): the no-model path cannot be seen here`);
    await setWithholding(true);
    try {
      const w = await readRunsInFull(info);
      assert(info.judgeable.length > 0, 'no long run of another session was read: the model would not have been asked anything');
      assert(/no chat model is available/.test(w.reason), `the reason should say no model is available: ${w.reason}`);
      // A consent prompt nobody answers would hold the read until the judge's 30 s timeout.
      assert(info.readMs < 10_000, `the read took ${info.readMs} ms: it waited on something (a consent prompt?)`);
    } finally {
      await setWithholding(false);
    }
  }, 60_000);
};
