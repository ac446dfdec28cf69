import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownerSocketPath } from '../../src/core/owner/ownerSocket';
import { StoreLink } from '../../src/core/owner/storeLink';
import { openServices } from '../../src/core/services';
import { OWNER_PROTOCOL } from '../../src/core/owner/protocol';
import { queryRows } from '../../src/core/store/sqlite';
import { CLI, connectMcp, type McpSession } from './helpers/mcpClient';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';
import { openFiles, rssMb } from './helpers/processInfo';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** No embedding model in these processes: the test is about who holds the store, and the model would only load the machine. */
const ENV = { env: { RECOLLECT_EMBEDDINGS: 'off' } };

interface StoreOwner {
  owner: { pid: number; kind: string };
  this_process: 'owner' | 'client';
  pid: number;
}

async function storeOwner(mcp: McpSession): Promise<StoreOwner> {
  const status = await mcp.call('memory_status', {});
  return status.store_owner as StoreOwner;
}

/** The files a process has open (Linux): a client must never have the database or the journal open. */
async function noteTexts(home: string): Promise<Set<string>> {
  const s = await openTemp(home);
  try {
    return new Set(queryRows(s.store.db, 'SELECT text FROM notes').map((r) => String(r.text)));
  } finally {
    s.store.close();
  }
}

const linux = process.platform === 'linux';

describe('one owner per store home, clients over a local socket', () => {
  it.runIf(linux)('three MCP servers started at once: one owns, two are its clients; writes through any are seen by all, and only the owner holds the database', async () => {
    const home = tempHome('owner');
    // Started together, so the election is a real race.
    const all = await Promise.all(['agent-a', 'agent-b', 'agent-c'].map((name) => connectMcp(home, name, ENV)));
    try {
      const pids = all.map((m) => m.transport.pid as number);
      const roles = await Promise.all(all.map(storeOwner));
      expect(roles.filter((r) => r.this_process === 'owner').length).toBe(1);
      const ownerPid = roles.find((r) => r.this_process === 'owner')!.pid;
      for (const r of roles) expect(r.owner).toMatchObject({ pid: ownerPid, kind: 'mcp' });
      const clientPids = pids.filter((p) => p !== ownerPid);
      expect(clientPids.length).toBe(2);

      for (const [i, m] of all.entries()) expect(await m.call('remember', { statement: `written through process ${i} zebra` })).toMatchObject({ ok: true });
      for (const m of all) {
        const found = await m.call('search_text', { query: 'zebra' });
        expect((found.hits as { text: string }[]).map((h) => h.text).sort()).toEqual([0, 1, 2].map((i) => `written through process ${i} zebra`));
      }
      // A resource read from a client comes from the owner's vault.
      const client = all[pids.indexOf(clientPids[0]!)]!;
      const listed = await client.client.listResources();
      expect(listed.resources.length).toBeGreaterThan(0);
      const read = await client.client.readResource({ uri: listed.resources[0]!.uri });
      expect(JSON.stringify(read.contents)).toContain('zebra');

      const isStoreFile = (f: string) => f.startsWith(home) && /store\.sqlite|journal\.jsonl/.test(f);
      expect(openFiles(ownerPid).filter(isStoreFile).length).toBeGreaterThan(0);
      for (const pid of clientPids) expect(openFiles(pid).filter(isStoreFile)).toEqual([]);
      console.log(`RSS: owner ${rssMb(ownerPid).toFixed(0)} MB, clients ${clientPids.map((p) => rssMb(p).toFixed(0)).join(' MB and ')} MB`);

      // A one-shot CLI call is a client too while an owner runs.
      const cli = spawnSync(process.execPath, [CLI, 'tool', 'memory_status', '{}'], { env: { ...process.env, RECOLLECT_HOME: home, RECOLLECT_EMBEDDINGS: 'off' }, encoding: 'utf8' });
      expect(JSON.parse(cli.stdout).store_owner).toMatchObject({ owner: { pid: ownerPid }, this_process: 'client' });
    } finally {
      await Promise.all(all.map((m) => m.close()));
    }
  });

  it('a home whose socket path would not fit in sun_path meets its owner in a short folder under the temp folder', async () => {
    const home = path.join(tempHome('long'), 'a-store-home-with-a-name-long-enough'.repeat(3));
    expect(Buffer.byteLength(path.join(home, 'owner.sock'))).toBeGreaterThan(107);
    const socket = ownerSocketPath(home);
    expect(socket.startsWith(os.tmpdir())).toBe(true);
    expect(Buffer.byteLength(socket)).toBeLessThanOrEqual(103);
    const owner = StoreLink.start({ home, kind: 'serve', build: 'test', open: () => openServices({ home, wasmPath: WASM_PATH }, { embeddings: { missing: 'off in this test' } }) });
    try {
      expect(await owner.ready()).toBe('owner');
      expect((fs.statSync(path.dirname(socket)).mode & 0o777).toString(8)).toBe('700');
      const cli = await new Promise<string>((resolve) => {
        execFile(process.execPath, [CLI, 'tool', 'remember', JSON.stringify({ statement: 'through the short socket' })], { env: { ...process.env, RECOLLECT_HOME: home, RECOLLECT_EMBEDDINGS: 'off' }, encoding: 'utf8' }, (_e, stdout) => resolve(stdout));
      });
      expect(JSON.parse(cli)).toMatchObject({ ok: true, source: 'cli' });
      expect(await owner.callTool('search_text', { query: 'short socket' }, { client: 'test' })).toMatchObject({ hits: [expect.objectContaining({ text: 'through the short socket' })] });
    } finally {
      await owner.close();
    }
  });

  it('kill -9 of the owner during a write storm from two clients: no acknowledged write lost, a client takes over, both carry on within 2 s', async () => {
    const home = tempHome('takeover');
    const owner = await connectMcp(home, 'owner', ENV);
    const clients = [await connectMcp(home, 'client-1', ENV), await connectMcp(home, 'client-2', ENV)];
    const ownerPid = owner.transport.pid as number;
    const stderrLines = new Map(clients.map((m) => [m, [] as string[]]));
    for (const m of clients) m.transport.stderr?.on('data', (d: Buffer) => stderrLines.get(m)!.push(...d.toString('utf8').split('\n')));
    const acked: string[] = [];
    try {
      expect((await storeOwner(clients[0]!)).owner.pid).toBe(ownerPid);
      let killedAt = 0;
      let stopped = false;
      const inDoubt: string[] = [];
      const failedReads: string[] = [];
      const firstAckAfterKill: number[] = [];
      const storms = clients.map(async (mcp, c) => {
        for (let i = 0; !stopped; i++) {
          const statement = `storm client ${c} write ${i}`;
          const res = await mcp.client.callTool({ name: 'remember', arguments: { statement } });
          const body = JSON.parse((res.content as { text: string }[])[0]!.text) as { ok: boolean; reason?: string };
          if (body.ok) {
            acked.push(statement);
            if (killedAt && firstAckAfterKill[c] === undefined) firstAckAfterKill[c] = Date.now() - killedAt;
          } else inDoubt.push(body.reason ?? '');
          // A read between the writes: one in flight at the kill is asked again, never failed.
          if (i % 3 === 0) await mcp.call('retrieve_memory', { subject: 'nothing here' }).catch((err: Error) => failedReads.push(err.message));
        }
      });
      while (acked.length < 20) await sleep(10);
      await sleep(Math.floor(Math.random() * 200));
      process.kill(ownerPid, 'SIGKILL');
      killedAt = Date.now();
      const deadline = Date.now() + 30_000;
      while ((firstAckAfterKill[0] === undefined || firstAckAfterKill[1] === undefined) && Date.now() < deadline) await sleep(20);
      const ackedAtKill = acked.length;
      while (acked.length < ackedAtKill + 20 && Date.now() < deadline) await sleep(20);
      stopped = true;
      await Promise.all(storms);

      for (const m of clients) console.log(stderrLines.get(m)?.filter((l) => /took over/.test(l)).join('\n'));
      console.log(`takeover: first acknowledged write after the kill came ${firstAckAfterKill.join(' ms and ')} ms later; ${acked.length} acknowledged, ${inDoubt.length} in doubt`);
      expect(firstAckAfterKill.length).toBe(2);
      // The 2 s is met on a quiet machine (the figure is printed above and kept in
      // docs/store-owner.md); the whole suite runs in parallel on two cores, which stretches a
      // takeover, so this bound only catches one that hangs.
      for (const ms of firstAckAfterKill) expect(ms).toBeLessThan(6_000);
      expect(failedReads).toEqual([]);
      // A write whose owner died before answering is refused as "may or may not have been saved", never silently.
      for (const reason of inDoubt) expect(reason).toMatch(/stopped while this write was in flight, so it may or may not have been saved/);

      const roles = await Promise.all(clients.map(storeOwner));
      const newOwner = roles.find((r) => r.this_process === 'owner');
      expect(newOwner).toBeDefined();
      expect(roles.every((r) => r.owner.pid === newOwner!.pid && r.owner.pid !== ownerPid)).toBe(true);
    } finally {
      await Promise.all([owner, ...clients].map((m) => m.close().catch(() => undefined)));
    }
    // Every acknowledged write is in the store the last owner left behind.
    const present = [...(await noteTexts(home))].join('\n');
    const lost = acked.filter((statement) => !present.includes(statement));
    expect(lost).toEqual([]);
    expect(acked.length).toBeGreaterThan(40);
  });

  it('a client facing an owner of another protocol version is refused with the reason and touches nothing; an owner refuses such a client', async () => {
    const home = tempHome('protocol');
    // A stand-in for a newer build's owner: it holds the claim and answers the hello with protocol 99.
    fs.writeFileSync(path.join(home, 'owner.lock'), `${process.pid} ${os.hostname()} mcp newer-build`);
    const greetedBy: unknown[] = [];
    const foreign = net.createServer((socket) => {
      socket.once('data', (hello) => {
        greetedBy.push(JSON.parse(hello.toString('utf8')));
        socket.write(JSON.stringify({ welcome: { protocol: 99, build: '9.9.9', pid: process.pid, kind: 'mcp', home } }) + '\n');
      });
    });
    await new Promise<void>((r) => foreign.listen(ownerSocketPath(home), r));
    try {
      const env = { ...process.env, RECOLLECT_HOME: home, RECOLLECT_EMBEDDINGS: 'off' };
      // Not spawnSync: the stand-in owner answers from this process's event loop.
      const cli = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
        const child = execFile(process.execPath, [CLI, 'tool', 'remember', JSON.stringify({ statement: 'must not be written' })], { env, encoding: 'utf8' }, (_err, stdout) => resolve({ status: child.exitCode, stdout }));
      });
      expect(cli.status).toBe(3);
      expect(JSON.parse(cli.stdout)).toEqual({
        ok: false,
        reason: expect.stringMatching(new RegExp(`owned by process ${process.pid} \\(mcp, build 9\\.9\\.9, owner protocol 99\\).*speaks owner protocol ${OWNER_PROTOCOL}.*Nothing was read or written`)),
      });
      const mcp = await connectMcp(home, 'agent', ENV);
      try {
        const res = await mcp.client.callTool({ name: 'remember', arguments: { statement: 'must not be written either' } });
        expect(res.isError).toBe(true);
        expect((res.content as { text: string }[])[0]!.text).toMatch(/owner protocol 99.*Nothing was read or written/);
      } finally {
        await mcp.close();
      }
      // Each call looked again (the foreign owner may have gone), and each hello said this build's protocol.
      expect(greetedBy.length).toBeGreaterThanOrEqual(2);
      for (const g of greetedBy) expect(g).toMatchObject({ hello: { protocol: OWNER_PROTOCOL } });
      // The store was never opened by either: no journal, no database.
      expect(fs.readdirSync(home).sort()).toEqual(['owner.lock', 'owner.sock']);
    } finally {
      await new Promise((r) => foreign.close(r));
    }

    // The other way round: a real owner refuses a client that says hello in protocol 99.
    fs.rmSync(path.join(home, 'owner.lock'));
    const owner = await connectMcp(home, 'owner', ENV);
    try {
      expect(await owner.call('remember', { statement: 'the owner wrote this' })).toMatchObject({ ok: true });
      const journalBefore = fs.readFileSync(path.join(home, 'journal.jsonl'));
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.createConnection(ownerSocketPath(home), () => {
          socket.write(JSON.stringify({ hello: { protocol: 99, build: '9.9.9', pid: process.pid, kind: 'cli' } }) + '\n');
          socket.write(JSON.stringify({ id: 1, call: { op: 'tool', name: 'remember', input: { statement: 'sneaked in' }, client: 'x' } }) + '\n');
        });
        let text = '';
        socket.on('data', (d) => (text += d.toString('utf8')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      const lines = answer.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toEqual([{ refused: { reason: expect.stringMatching(new RegExp(`speaks owner protocol ${OWNER_PROTOCOL}; the client sent owner protocol 99`)), owner: expect.objectContaining({ protocol: OWNER_PROTOCOL }) } }]);
      expect(fs.readFileSync(path.join(home, 'journal.jsonl')).equals(journalBefore)).toBe(true);
    } finally {
      await owner.close();
    }
  });

  it('a VS Code window takes the store over from an MCP owner during a write storm: nothing refused, nothing lost; the MCP server takes it back when the window closes', async () => {
    const home = tempHome('handover');
    const mcp = await connectMcp(home, 'agent', ENV);
    const other = await connectMcp(home, 'other', ENV);
    const mcpPid = mcp.transport.pid as number;
    const acked: string[] = [];
    const refused: string[] = [];
    let stopped = false;
    const storms = [mcp, other].map(async (m, c) => {
      for (let i = 0; !stopped; i++) {
        const statement = `handover storm ${c} write ${i}`;
        const r = await m.call('remember', { statement });
        if (r.ok === true) acked.push(statement);
        else refused.push(String(r.reason));
      }
    });
    while (acked.length < 10) await sleep(10);
    // The extension host's side, in this process: the same StoreLink the extension uses (src/host/storeOwnership.ts).
    const window = StoreLink.start({ home, kind: 'vscode', build: 'test', askHandover: true, open: () => openServices({ home, wasmPath: WASM_PATH }, { embeddings: { missing: 'off in this test' } }) });
    try {
      expect(await window.ready()).toBe('owner');
      const atHandover = acked.length;
      while (acked.length < atHandover + 20) await sleep(10);
      expect(await storeOwner(mcp)).toMatchObject({ owner: { pid: process.pid, kind: 'vscode' }, this_process: 'client' });
      const status = (await window.callTool('memory_status', {}, { client: 'vscode-extension' })) as { store_owner: StoreOwner };
      expect(status.store_owner).toMatchObject({ owner: { pid: process.pid, kind: 'vscode' }, this_process: 'owner' });
    } finally {
      await window.close();
    }
    // The window closed: a client takes over again and the storm goes on.
    const atClose = acked.length;
    while (acked.length < atClose + 10) await sleep(10);
    stopped = true;
    await Promise.all(storms);
    const roles = await Promise.all([mcp, other].map(storeOwner));
    expect(roles.filter((r) => r.this_process === 'owner').length).toBe(1);
    expect(roles[0]!.owner.pid === mcpPid || roles[0]!.owner.pid === other.transport.pid).toBe(true);
    await Promise.all([mcp.close(), other.close()]);
    // A handover or a clean close never leaves a write in doubt.
    expect(refused).toEqual([]);
    const present = [...(await noteTexts(home))].join('\n');
    expect(acked.filter((statement) => !present.includes(statement))).toEqual([]);
  });
});
