'use strict';
// The first window's side of two VS Code windows on one store. run.mjs opens a second page of
// the same code-server (its own extension host) running secondWindow.cjs; the two exchange what
// each wrote through files beside the results file:
//   <results>.first-window.json   this window: its pid, the fact it wrote, a session to archive
//   <results>.second-window.json  the second window: its pid, the fact it wrote, what it archived
// Registered last by index.cjs: when this window's tests are done, run.mjs closes it and the
// second window takes the store over (secondWindow.cjs checks that part).

const fs = require('fs');
const vscode = require('vscode');

const RESULTS = process.env.RECOLLECT_E2E_RESULTS;
const FIRST = `${RESULTS}.first-window.json`;
const SECOND = `${RESULTS}.second-window.json`;

module.exports = function register({ test, assert, callJson, assertOk, truncate, safeStringify, until, requestScreenshot, EXTENSION_ID }) {
  test('a second window on the store is a client of this one: each finds what the other wrote, its chapters_continue and Continue with chapters archive here and open there', async (info) => {
    const s = await vscode.extensions.getExtension(EXTENSION_ID).exports.services;
    const tag = Date.now().toString(36);
    const fact = { statement: `The first window's release train leaves from platform ${tag}`, subject: `release train ${tag}`, predicate: 'leaves from', object: `platform ${tag}` };
    const [written, writtenText] = await callJson('remember', fact);
    assert(written.ok === true, `remember in the first window: ${truncate(writtenText)}`);
    // A session the second window archives: the imported Claude Code fixture, up to an assistant row.
    const session = s.history.currentSession({ client: 'claude-code' });
    assert(session, 'no imported Claude Code session: the import test above places one');
    const ceiling = s.chapters.ceiling(session.id);
    const found = s.store.db.exec("SELECT seq FROM events WHERE session_id = ? AND kind = 'assistant' AND seq <= ? ORDER BY seq DESC LIMIT 1", [session.id, ceiling.archiveCeiling]);
    const seq = found[0] && Number(found[0].values[0][0]);
    assert(seq > 0, `no assistant row at or below the ceiling in ${session.id}: ${safeStringify(ceiling)}`);
    const childrenBefore = s.chapters.childrenOf(session.id).map((c) => c.id);
    fs.rmSync(SECOND, { force: true });
    fs.writeFileSync(`${FIRST}.tmp`, JSON.stringify({ pid: process.pid, fact, sessionId: session.id, seq }));
    fs.renameSync(`${FIRST}.tmp`, FIRST);

    fs.rmSync(`${RESULTS}.window-done`, { force: true });
    fs.writeFileSync(`${RESULTS}.window-request`, '{}');
    const opened = JSON.parse(await until('the second window to open', () => (fs.existsSync(`${RESULTS}.window-done`) ? fs.readFileSync(`${RESULTS}.window-done`, 'utf8') : undefined), 120_000));
    assert(opened.opened === true, `run.mjs could not open a second window: ${opened.error}`);
    const second = JSON.parse(await until('the second window to write and archive', () => (fs.existsSync(SECOND) ? fs.readFileSync(SECOND, 'utf8') : undefined), 150_000));
    assert(second.pid !== process.pid, `the second page shares this extension host (pid ${process.pid}): not a second window`);

    // What the second window wrote through a tool is in this window's store.
    const [got, gotText] = await callJson('retrieve_memory', { subject: second.fact.subject });
    assertOk(got, gotText, 'retrieve_memory');
    assert(gotText.includes(second.fact.object), `the second window's fact "${second.fact.statement}" is not found here: ${truncate(gotText)}`);
    // Its chapters_continue and its Continue with chapters each recorded a child here.
    const children = s.chapters.childrenOf(session.id).filter((c) => !childrenBefore.includes(c.id));
    assert(children.some((c) => c.id === second.continued), `the second window's chapters_continue child ${second.continued} is not recorded here: ${safeStringify(children)}`);
    assert(children.some((c) => c.id !== second.continued && c.intent === 'continue' && c.uptoSeq === seq), `no child up to seq ${seq} from the second window's Continue with chapters: ${safeStringify(children)}`);
    // This window's memory browser shows the second window's fact, as the second window's showed this one's.
    await vscode.commands.executeCommand('recollect.showMemory');
    let shot;
    for (let i = 0; i < 8 && !(shot && shot.found); i++) {
      await new Promise((r) => setTimeout(r, 1500));
      shot = await requestScreenshot('first-window-memory', second.fact.statement);
    }
    assert(shot.found === true, `the first window's memory browser does not show the second window's fact (${shot.file})`);
    info.firstWindow = process.pid;
    info.secondWindow = second.pid;
    info.children = children.map((c) => `${c.id} ${c.intent} up to ${c.uptoSeq}`);
    info.screenshot = shot.file;
  }, 300_000);
};
