import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { build } from 'rolldown';
import { beforeAll, describe, expect, it } from 'vitest';
import type { NextSession } from '../../src/core/chapters/chaptersService';
import { openServices } from '../../src/core/services';
import { historyViewHandlers } from '../../src/host/historyViewHandlers';
import { memoryViewHandlers } from '../../src/host/memoryViewHandlers';
import { notesDataHandlers } from '../../src/host/notesDataHandlers';
import { rulesViewHandlers } from '../../src/host/rulesViewHandlers';
import { joinStoreAsHost, type HostStore } from '../../src/host/storeOwnership';
import { transcriptFixtures } from './helpers/fixtures';
import { tempHome, WASM_PATH } from './helpers/tempStore';
import { openFiles, rssMb } from './helpers/processInfo';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const linux = process.platform === 'linux';

/** The store's own files a holder keeps open; a client window must have none of them. */
const STORE_FILES = /\/(journal\.jsonl|store\.sqlite|journal\.lock)$/;

/** The other window: a real process (helpers/windowChild.ts) answering the host's view handlers. */
class OtherWindow {
  private next = 1;
  private readonly waiting = new Map<number, (reply: { result?: unknown; error?: string }) => void>();
  readonly ready: Promise<void>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    let started!: () => void;
    let failed!: (err: Error) => void;
    this.ready = new Promise((resolve, reject) => ((started = resolve), (failed = reject)));
    child.once('exit', (code) => {
      const gone = new Error(`the other window exited with ${code}`);
      failed(gone);
      for (const answer of this.waiting.values()) answer({ error: gone.message });
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as { id?: number; ready?: true; result?: unknown; error?: string };
      if (msg.ready) return started();
      this.waiting.get(msg.id as number)?.(msg);
      this.waiting.delete(msg.id as number);
    });
  }

  async ask(view: string, method: string, params: unknown = {}): Promise<unknown> {
    const id = this.next++;
    const reply = await new Promise<{ result?: unknown; error?: string }>((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ id, view, method, params }) + '\n');
    });
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.result;
  }

  get pid(): number {
    return this.child.pid as number;
  }
}

/** The views of a window, answered in this process: what the window that owns the store shows. */
function viewsOf(store: HostStore, services: Awaited<HostStore['services']>, home: string) {
  return {
    memory: memoryViewHandlers(services, { confirm: () => Promise.resolve(true), openFile: () => Promise.resolve(), openSession: () => Promise.resolve(), openRules: () => Promise.resolve(), vaultRoot: `${home}/vault` }),
    history: historyViewHandlers(services, { runDoor: () => Promise.resolve(undefined), openExternal: () => Promise.resolve(false), takeOpening: () => ({}) }),
    rules: rulesViewHandlers(services, { machineId: 'machine-of-the-test', approver: 'Ana', confirmApproval: () => Promise.resolve(true) }),
    notes: notesDataHandlers(services, home),
    store,
  };
}

describe('a second VS Code window is a client of the window that owns the store', () => {
  let child = '';
  beforeAll(async () => {
    child = path.join(tempHome('windowchild'), 'windowChild.cjs');
    await build({ input: path.join(__dirname, 'helpers/windowChild.ts'), platform: 'node', logLevel: 'warn', output: { file: child, format: 'cjs' } });
    // The regex engine's wasm is read from beside the bundle, as dist/ has it.
    fs.copyFileSync(createRequire(import.meta.url).resolve('re2-wasm/build/wasm/re2.wasm'), path.join(path.dirname(child), 're2.wasm'));
  });

  it.runIf(linux)('its views, tools and language server answer from the owner without opening the store; when the owner closes, it takes the store over and answers the same', async () => {
    const home = tempHome('window2');
    const log = { info: () => undefined } as unknown as Parameters<typeof joinStoreAsHost>[0]['log'];
    const first = joinStoreAsHost({ home, build: 'test', log, open: () => openServices({ home, wasmPath: WASM_PATH }, { embeddings: { missing: 'off in this test' } }) });
    const own = await first.own;
    expect(first.link.storeRole().this_process).toBe('owner');
    // As the owning window does with vscode.env.machineId, which every window on this machine shares.
    own.rules.machine.adopt('machine-of-the-test');
    // Something in every view: imported sessions, a fact, a daily-log entry, a rule waiting on a person.
    await own.importer.importPaths([transcriptFixtures()]);
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-window2-project-'));
    expect(await first.link.callTool('remember', { statement: 'the deploy key lives in the ops vault', subject: 'deploy key', predicate: 'lives in', object: 'the ops vault' }, { client: 'codex' })).toMatchObject({ ok: true });
    expect(await first.link.callTool('remember_note', { text: 'Standup moved to 10:00' }, { client: 'codex' })).toMatchObject({ ok: true });
    expect(await first.link.callTool('chapters_rule_propose', { text: 'Run npm test before every commit.', project, category: 'testing' }, { client: 'codex' })).toMatchObject({ ok: true });
    const mine = viewsOf(first, await first.services, home);

    const proc = spawn(process.execPath, [child, home, WASM_PATH], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const other = new OtherWindow(proc);
    let firstClosed = false;
    try {
      await other.ready;
      expect(await other.ask('window', 'role')).toEqual({ owner: { pid: process.pid, kind: 'vscode', build: 'test' }, this_process: 'client', pid: other.pid });
      // A client: no copy of the store, none of its files open.
      expect(openFiles(other.pid).filter((f) => STORE_FILES.test(f))).toEqual([]);
      expect(openFiles(process.pid).filter((f) => f.startsWith(home) && STORE_FILES.test(f)).length).toBeGreaterThan(0);
      const clientRss = rssMb(other.pid);

      // Every view shows what the owning window shows.
      const same = async (view: 'memory' | 'history' | 'rules' | 'notes', method: string, params: unknown) => {
        const here = await (mine[view] as unknown as Record<string, (p: unknown) => unknown>)[method]!(params);
        const there = await other.ask(view, method, params);
        expect(there, `${view}.${method}`).toEqual(JSON.parse(JSON.stringify(here)));
        return there as Record<string, unknown>;
      };
      const overview = await same('memory', 'overview', {});
      expect((overview.sessions as { total: number }).total).toBeGreaterThan(0);
      expect((overview.rules as { pending: number }).pending).toBe(1);
      await same('memory', 'status', {});
      const found = await same('memory', 'search', { query: 'deploy key' });
      const factId = (found.hits as { id: string; kind: string }[]).find((h) => h.kind === 'fact')?.id;
      expect(factId).toMatch(/^fact:/);
      await same('memory', 'recent', { limit: 10 });
      await same('memory', 'retrieve', { subject: 'deploy key' });
      const sessions = await same('history', 'sessions', {});
      const sessionId = (sessions.sessions as { id: string }[])[0]!.id;
      const session = await same('history', 'session', { sessionId });
      await same('history', 'rowText', { sessionId, seq: (session.rows as { seq: number }[])[0]!.seq });
      await same('history', 'sessions', { query: 'error' });
      const rules = await same('rules', 'rules', {});
      await same('notes', 'recollect/entities', { prefix: 'dep', limit: 10 });
      await same('notes', 'recollect/ids', { kind: 'fact', prefix: '', limit: 10 });
      await same('notes', 'recollect/fact', { subjects: ['deploy key'] });
      await same('notes', 'recollect/resolveIds', { ids: [factId, 'note:nowhere.md', 'entry:nope'] });

      // Writes from the client window land in the owner's store.
      expect(await other.ask('memory', 'retire', { id: factId })).toMatchObject({ outcome: 'done' });
      expect((await own.browse.retired(10)).items.map((r) => r.id)).toContain(factId);
      const ruleId = (rules.pending as { id: string }[])[0]!.id;
      expect(await other.ask('rules', 'decide', { ruleId, decision: 'approve' })).toMatchObject({ decided: true, status: 'approved' });
      expect(own.rules.view(ruleId)?.status).toBe('approved');
      expect(await other.ask('window', 'tool', { name: 'remember_note', input: { text: 'written from the second window' } })).toMatchObject({ ok: true });
      expect((await own.browse.dailyLog(10)).items.map((e) => e.text)).toContain('written from the second window');
      const before = await other.ask('memory', 'overview', {});

      // The owning window closes: the other takes the store over and shows the same.
      await first.close();
      firstClosed = true;
      let role: { this_process: string; owner: { pid: number } } | undefined;
      for (let i = 0; i < 200; i++) {
        role = (await other.ask('window', 'role')) as typeof role;
        if (role?.this_process === 'owner') break;
        await sleep(25);
      }
      expect(role).toMatchObject({ this_process: 'owner', owner: { pid: other.pid } });
      const after = (await other.ask('memory', 'overview', {})) as Record<string, unknown>;
      // The activity section differs only by the calls made meanwhile; the rest is the same store.
      expect({ ...after, activity: null }).toEqual({ ...(before as Record<string, unknown>), activity: null });
      expect(openFiles(other.pid).filter((f) => STORE_FILES.test(f)).length).toBeGreaterThan(0);
      expect(await other.ask('window', 'tool', { name: 'remember_note', input: { text: 'written after the takeover' } })).toMatchObject({ ok: true });
      console.log(`client window RSS ${clientRss.toFixed(0)} MB; owner window (this test process, vitest included) ${rssMb(process.pid).toFixed(0)} MB`);
    } finally {
      if (!firstClosed) await first.close();
      proc.stdin.end();
      await new Promise((r) => proc.once('exit', r));
      if (stderr) console.log(stderr);
    }
    // What the second window wrote as owner is in the store it left behind.
    const reopened = await openServices({ home, wasmPath: WASM_PATH }, { embeddings: { missing: 'off in this test' } });
    expect(reopened.browse.dailyLog(10).items.map((e) => e.text)).toEqual(expect.arrayContaining(['written from the second window', 'written after the takeover']));
    reopened.store.close();
  });

  it.runIf(linux)('chapters_continue and chapters_fork called in the client window open their next session there, not in the owning window', async () => {
    const home = tempHome('window2-chapters');
    const log = { info: () => undefined } as unknown as Parameters<typeof joinStoreAsHost>[0]['log'];
    const first = joinStoreAsHost({ home, build: 'test', log, open: () => openServices({ home, wasmPath: WASM_PATH }, { embeddings: { missing: 'off in this test' } }) });
    const own = await first.own;
    // As registerChapters does in the owning window: its opener offers a next session in that window.
    const offeredByOwner: NextSession[] = [];
    own.chapters.useOpener({ open: (next) => (offeredByOwner.push(next), Promise.resolve({ opened: false, how: 'offered in the owning window' })) });
    await own.importer.importPaths([transcriptFixtures()]);
    const session = own.history.currentSession({ client: 'claude-code' });
    expect(session).toBeDefined();

    const proc = spawn(process.execPath, [child, home, WASM_PATH], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const other = new OtherWindow(proc);
    try {
      await other.ready;
      expect(await other.ask('window', 'role')).toMatchObject({ this_process: 'client' });
      const segment = (await other.ask('window', 'toolHere', { name: 'chapters_segment', input: { sessionId: session!.id } })) as { ok?: boolean; ranges: { startSeq: number; endSeq: number; title: string; summary: string }[] };
      expect(segment.ranges.length).toBeGreaterThan(0);
      const chapters = segment.ranges.map(({ startSeq, endSeq, title, summary }) => ({ startSeq, endSeq, title, summary }));
      const continued = (await other.ask('window', 'toolHere', { name: 'chapters_continue', input: { sessionId: session!.id, chapters, handoffNote: 'carry on from the client window' } })) as { ok: true; childSessionId: string; marker: string; firstMessage: string; opened: unknown };
      expect(continued).toMatchObject({ ok: true, opened: { opened: false, how: `offered in window ${other.pid}` } });
      const forked = (await other.ask('window', 'toolHere', { name: 'chapters_fork', input: { sessionId: session!.id, handoffNote: 'another angle' } })) as { ok: true; childSessionId: string; marker: string; firstMessage: string };
      expect(forked).toMatchObject({ ok: true, opened: { opened: false, how: `offered in window ${other.pid}` } });
      // Opened in the window that asked, with the answer's own session; the owning window offered nothing.
      expect(await other.ask('window', 'opened')).toEqual([
        { childSessionId: continued.childSessionId, marker: continued.marker, intent: 'continue', firstMessage: continued.firstMessage },
        { childSessionId: forked.childSessionId, marker: forked.marker, intent: 'fork', firstMessage: forked.firstMessage },
      ]);
      expect(offeredByOwner).toEqual([]);
      // The archive is the owner's store: the child is recorded there and its first message is what the client was given.
      expect(own.chapters.childrenOf(session!.id).map((c) => c.id)).toContain(continued.childSessionId);
      expect(own.chapters.firstMessageOf(continued.childSessionId)?.firstMessage).toBe(continued.firstMessage);

      // A caller with no editor of its own (an MCP server on the client's side of the socket) is offered the next session by the owning window, as before.
      const viaMcp = await other.ask('window', 'tool', { name: 'chapters_fork', input: { sessionId: session!.id, handoffNote: 'a third angle' } });
      expect(viaMcp).toMatchObject({ ok: true, opened: { how: 'offered in the owning window' } });
      expect(offeredByOwner.map((n) => n.intent)).toEqual(['fork']);
    } finally {
      await first.close();
      proc.stdin.end();
      await new Promise((r) => proc.once('exit', r));
      if (stderr) console.log(stderr);
    }
  });
});
