import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpSessionHook } from '../../src/cli/mcpSession';
import { StoreLink } from '../../src/core/owner/storeLink';
import { openServices } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { CLI, connectMcp, type McpSession } from './helpers/mcpClient';
import { connectHttp, startServe } from './helpers/mcpHttp';
import { openFiles } from './helpers/processInfo';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ENV = { env: { RECOLLECT_EMBEDDINGS: 'off' } };
const linux = process.platform === 'linux';

interface StoreOwner {
  owner: { pid: number; kind: string };
  this_process: 'owner' | 'client';
  pid: number;
}

/** Anonymous resident memory (RssAnon), MB: what a process holds itself, beside the node binary's pages every node process shares. */
function anonMb(pid: number): number {
  return Number(/RssAnon:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

async function notes(home: string): Promise<{ text: string; source: string }[]> {
  const s = await openTemp(home);
  try {
    return queryRows(s.store.db, 'SELECT text, source FROM notes').map((r) => ({ text: String(r.text), source: String(r.source) }));
  } finally {
    s.store.close();
  }
}

/** `recollect tool` as a process of its own; `anonAtExit` is its RssAnon as it exited (MB), written by a --require preload. */
async function oneShot(home: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; anonAtExit: number }> {
  const preload = path.join(home, 'anon-at-exit.cjs');
  const out = path.join(home, 'anon-at-exit.txt');
  fs.writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, /RssAnon:\\s+(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]));`);
  const env = { ...process.env, RECOLLECT_HOME: home, RECOLLECT_EMBEDDINGS: 'off', NODE_OPTIONS: `--require ${preload}` };
  // Not spawnSync: the owner may be this process's own event loop.
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [CLI, 'tool', ...args], { env, encoding: 'utf8' }, (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
  const anonAtExit = Number(fs.readFileSync(out, 'utf8')) / 1024;
  fs.rmSync(out);
  return { ...r, anonAtExit };
}

const storeOwner = async (m: Pick<McpSession, 'call'>) => (await m.call('memory_status', {})).store_owner as StoreOwner;

describe('recollect mcp as a thin relay to the store owner', () => {
  it.runIf(linux)('started while an owner serves, it runs no MCP server of its own: the owner runs its session under its own name and pid, and it holds little more than Node; so does a one-shot recollect tool', async () => {
    const home = tempHome('relay');
    const owner = await connectMcp(home, 'owner', ENV);
    const relay = await connectMcp(home, 'relay-client', { ...ENV, args: ['--name', 'named-relay'] });
    try {
      const relayPid = relay.transport.pid as number;
      expect(await storeOwner(relay)).toMatchObject({ owner: { pid: owner.transport.pid, kind: 'mcp' }, this_process: 'client', pid: relayPid });
      expect((await relay.client.listTools()).tools.length).toBe((await owner.client.listTools()).tools.length);
      expect(relay.client.getServerVersion()?.name).toBe('recollect');
      expect(await relay.call('remember', { statement: 'relayed write about the heron' })).toMatchObject({ ok: true, source: 'named-relay' });
      const found = await owner.call('search_text', { query: 'heron' });
      expect((found.hits as { text: string }[]).map((h) => h.text)).toEqual(['relayed write about the heron']);
      // A client running the full CLI holds about 50 MB of its own (the MCP SDK, the tools, the
      // tokenizer's tables); the relay holds Node's own few MB and its pipe.
      const anon = anonMb(relayPid);
      console.log(`relay RssAnon ${anon.toFixed(1)} MB, owner ${anonMb(owner.transport.pid as number).toFixed(1)} MB`);
      expect(anon).toBeLessThan(25);
      expect(openFiles(relayPid).filter((f) => f.startsWith(home) && /store\.sqlite|journal\.jsonl/.test(f))).toEqual([]);

      // A one-shot `recollect tool` only sends the owner its call: its answers, refusals and exit codes are the full CLI's.
      const wrote = await oneShot(home, ['remember', JSON.stringify({ statement: 'one-shot write about the heron' })]);
      expect(wrote.code).toBe(0);
      expect(JSON.parse(wrote.stdout)).toMatchObject({ ok: true, source: 'cli' });
      console.log(`one-shot tool RssAnon at exit ${wrote.anonAtExit.toFixed(1)} MB`);
      expect(wrote.anonAtExit).toBeLessThan(25);
      const status = await oneShot(home, ['memory_status', '{}']);
      expect(JSON.parse(status.stdout).store_owner).toMatchObject({ owner: { pid: owner.transport.pid }, this_process: 'client' });
      const refused = await oneShot(home, ['remember', JSON.stringify({ statement: '' })]);
      expect(refused.code).toBe(3);
      expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, reason: expect.any(String) });
      const unknown = await oneShot(home, ['no_such_tool', '{}']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/unknown tool "no_such_tool"; known: /);
      expect((await owner.call('search_text', { query: 'heron' })).hits).toHaveLength(2);
    } finally {
      await relay.close();
      await owner.close();
    }
  });

  it.runIf(linux)('kill -9 of the owner mid-storm from a relay and an HTTP client: the relay takes the store over, its MCP client sees only a delay (same session, same name), no acknowledged write is lost', async () => {
    const home = tempHome('relay-takeover');
    const owner = await connectMcp(home, 'owner', ENV);
    const relay = await connectMcp(home, 'relay-agent', ENV);
    const serve = await startServe(home, { RECOLLECT_EMBEDDINGS: 'off' });
    const http = await connectHttp(serve.url, serve.token, 'http-agent');
    const relayPid = relay.transport.pid as number;
    const relayLog: string[] = [];
    relay.transport.stderr?.on('data', (d: Buffer) => relayLog.push(d.toString('utf8')));
    const acked: { statement: string; source: string }[] = [];
    const inDoubt: string[] = [];
    const failedReads: string[] = [];
    try {
      expect(await storeOwner(relay)).toMatchObject({ owner: { pid: owner.transport.pid }, this_process: 'client', pid: relayPid });
      expect(anonMb(relayPid)).toBeLessThan(25);
      let killedAt = 0;
      let stopped = false;
      const firstAckAfterKill: number[] = [];
      const storms = [relay, http].map(async (m, c) => {
        for (let i = 0; !stopped; i++) {
          const statement = `relay storm ${c} write ${i}`;
          const body = await m.call('remember', { statement });
          if (body.ok === true) {
            acked.push({ statement, source: String(body.source) });
            if (killedAt && firstAckAfterKill[c] === undefined) firstAckAfterKill[c] = Date.now() - killedAt;
          } else inDoubt.push(String(body.reason));
          if (i % 3 === 0) await m.call('retrieve_memory', { subject: 'nothing here' }).catch((err: Error) => failedReads.push(err.message));
        }
      });
      while (acked.length < 20) await sleep(10);
      await sleep(Math.floor(Math.random() * 200));
      process.kill(owner.transport.pid as number, 'SIGKILL');
      killedAt = Date.now();
      const deadline = Date.now() + 30_000;
      while ((firstAckAfterKill[0] === undefined || firstAckAfterKill[1] === undefined) && Date.now() < deadline) await sleep(20);
      const atAck = acked.length;
      while (acked.length < atAck + 20 && Date.now() < deadline) await sleep(20);
      stopped = true;
      await Promise.all(storms);
      console.log(`relay takeover: first acknowledged write after the kill ${firstAckAfterKill.join(' ms (relay) and ')} ms (http); ${acked.length} acknowledged, ${inDoubt.length} in doubt`);
      console.log(relayLog.join('').split('\n').filter((l) => /took over|went away|full server/.test(l)).join('\n'));
      expect(firstAckAfterKill.length).toBe(2);
      expect(failedReads).toEqual([]);
      for (const reason of inDoubt) expect(reason).toMatch(/stopped while this write was in flight, so it may or may not have been saved/);

      // The session went on: the same SDK client, its initialize replayed to the new server, so
      // what it writes still carries the name it gave in its own initialize.
      const roles = [await storeOwner(relay), await storeOwner(http)];
      const newOwner = roles.find((r) => r.this_process === 'owner');
      expect(newOwner).toBeDefined();
      expect(roles.every((r) => r.owner.pid === newOwner!.pid)).toBe(true);
      expect(await relay.call('remember', { statement: 'after the takeover' })).toMatchObject({ ok: true, source: 'relay-agent' });
    } finally {
      await http.close().catch(() => undefined);
      await serve.stop();
      await relay.close().catch(() => undefined);
      await owner.close().catch(() => undefined);
    }
    const stored = await notes(home);
    const present = new Set(stored.map((n) => n.text));
    expect(acked.filter((a) => !present.has(a.statement))).toEqual([]);
    expect(acked.filter((a) => a.statement.startsWith('relay storm 0')).every((a) => a.source === 'relay-agent')).toBe(true);
    expect(acked.length).toBeGreaterThan(40);
  });

  it.runIf(linux)('a VS Code window that owns the store runs a relay\'s session too; when the window closes, the relay takes the store over and its session goes on', async () => {
    const home = tempHome('relay-window');
    // The extension host's side, in this process, with the hook the extension passes (host/container.ts).
    const window = StoreLink.start({ home, kind: 'vscode', build: 'test', mcpSession: mcpSessionHook('test'), open: () => openServices({ home, wasmPath: WASM_PATH }, { embeddings: { missing: 'off in this test' } }) });
    expect(await window.ready()).toBe('owner');
    const relay = await connectMcp(home, 'window-relay', ENV);
    const relayPid = relay.transport.pid as number;
    try {
      expect(await storeOwner(relay)).toMatchObject({ owner: { pid: process.pid, kind: 'vscode' }, this_process: 'client', pid: relayPid });
      expect(anonMb(relayPid)).toBeLessThan(25);
      expect(await relay.call('remember', { statement: 'written through the window' })).toMatchObject({ ok: true, source: 'window-relay' });
    } finally {
      await window.close();
    }
    try {
      expect(await storeOwner(relay)).toMatchObject({ owner: { pid: relayPid, kind: 'mcp' }, this_process: 'owner' });
      const found = await relay.call('search_text', { query: 'window' });
      expect((found.hits as { text: string }[]).map((h) => h.text)).toEqual(['written through the window']);
      expect(await relay.call('remember', { statement: 'written after the window closed' })).toMatchObject({ ok: true, source: 'window-relay' });
    } finally {
      await relay.close();
    }
  });
});
