import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { connectMcp, type McpSession } from './helpers/mcpClient';
import { connectHttp, startServe, type ServeProcess } from './helpers/mcpHttp';
import { tempHome } from './helpers/tempStore';

type Session = Pick<McpSession, 'call' | 'close'>;
interface Text { author: string; text: string; untrusted: boolean }

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
function track<T extends { close(): Promise<void> }>(s: T): T {
  cleanups.push(() => s.close());
  return s;
}

/** The whole exchange between three real agents, whatever the transport. */
async function exchange(alice: Session, bob: Session, carol: Session): Promise<void> {
  // Connecting is not enough to be addressed by name until the connection has made a call.
  await bob.call('whats_new', {});
  await carol.call('whats_new', {});
  const asked = await alice.call('ask_agent', { to: 'bob', request: 'Which Node version does CI use?' });
  expect(asked).toMatchObject({ ok: true, from: 'alice', to: 'bob', status: 'open' });
  await alice.call('remember', { statement: 'CI runs on every push to main' });

  const news = await bob.call('whats_new', {});
  expect(news.open_requests).toEqual([expect.objectContaining({ id: asked.id, from: 'alice', request: { author: 'alice', text: 'Which Node version does CI use?', untrusted: true } })]);
  expect(news.writes).toEqual([expect.objectContaining({ kind: 'note', summary: expect.objectContaining({ author: 'alice', untrusted: true }) })]);

  expect(await carol.call('answer_request', { id: asked.id, answer: 'Node 12' })).toMatchObject({ ok: false, reason: expect.stringContaining('only that agent can answer') });
  expect(await bob.call('answer_request', { id: asked.id, answer: 'Node 20 LTS' })).toMatchObject({ ok: true });

  const answered = await alice.call('list_requests', { to: 'bob', status: 'answered' });
  const [request] = answered.requests as { id: string; answer: Text; request: Text }[];
  expect(request).toMatchObject({ id: asked.id, request: { untrusted: false }, answer: { author: 'bob', text: 'Node 20 LTS', untrusted: true } });
  expect(await alice.call('whats_new', {})).toMatchObject({ writes: [expect.objectContaining({ kind: 'answer', request_id: asked.id })] });

  expect(await carol.call('close_request', { id: asked.id })).toMatchObject({ ok: false, reason: expect.stringContaining('only they can close') });
  expect(await bob.call('close_request', { id: asked.id })).toMatchObject({ ok: true, closed_by: 'bob' });
}

describe('requests between agents over MCP stdio (official SDK client, real server processes)', () => {
  it('one asks, the other sees it in whats_new and answers, the first reads it; a third cannot answer or close', async () => {
    const home = tempHome('req-stdio');
    const [alice, bob, carol] = await Promise.all(['alice', 'bob', 'carol'].map((n) => connectMcp(home, n).then(track)));
    await exchange(alice!, bob!, carol!);
  });

  it('refuses a client that sent no name, and --name overrides the client\'s own name', async () => {
    const home = tempHome('req-names');
    const unnamed = track(await connectMcp(home, ''));
    const refused = await unnamed.client.callTool({ name: 'whats_new', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content as { text: string }[])[0]!.text)).toMatchObject({ ok: false, reason: expect.stringContaining('this connection has no name') });
    // Memory itself still works for it, labelled with the generic name.
    expect(await unnamed.call('remember', { statement: 'unnamed clients can still save' })).toMatchObject({ ok: true, source: 'mcp-client' });

    const renamed = track(await connectMcp(home, 'some-generic-client', { args: ['--name', 'codex'] }));
    expect(await renamed.call('whats_new', { include_own: true })).toMatchObject({ ok: true, connection: 'codex' });
    expect(await renamed.call('remember', { statement: 'saved as codex' })).toMatchObject({ source: 'codex' });
  });

  it('applies the hourly ask limit across processes (RECOLLECT_ASK_LIMIT=2)', async () => {
    const home = tempHome('req-limit');
    const env = { RECOLLECT_ASK_LIMIT: '2' };
    const bob = track(await connectMcp(home, 'bob', { env }));
    await bob.call('whats_new', {});
    const alice1 = track(await connectMcp(home, 'alice', { env }));
    const alice2 = track(await connectMcp(home, 'alice', { env }));
    expect(await alice1.call('ask_agent', { to: 'bob', request: 'one' })).toMatchObject({ ok: true });
    expect(await alice2.call('ask_agent', { to: 'bob', request: 'two' })).toMatchObject({ ok: true });
    expect(await alice1.call('ask_agent', { to: 'bob', request: 'three' })).toMatchObject({ ok: false, budget: { limit: 2, used: 2, unit: 'requests' } });
  });
});

describe('MCP over Streamable HTTP (recollect serve)', () => {
  async function serve(home = tempHome('req-http')): Promise<ServeProcess> {
    const server = await startServe(home);
    cleanups.push(() => server.stop());
    return server;
  }

  it('serves the same exchange to three HTTP sessions, each named by its own client, and shares the store with stdio', async () => {
    const home = tempHome('req-http');
    const server = await serve(home);
    const [alice, bob, carol] = await Promise.all(['alice', 'bob', 'carol'].map((n) => connectHttp(server.url, server.token, n).then(track)));
    await exchange(alice!, bob!, carol!);

    // A stdio agent on the same store sees what the HTTP agents recorded.
    const dave = track(await connectMcp(home, 'dave'));
    const news = await dave.call('whats_new', {});
    expect((news.writes as { summary: Text }[]).map((w) => w.summary.author)).toContain('alice');
  });

  it('keeps the token in the store home, readable by its owner only, and prints its path, not the token', async () => {
    const home = tempHome('req-http-token');
    const server = await serve(home);
    expect(server.tokenFile.startsWith(home)).toBe(true);
    expect(fs.statSync(server.tokenFile).mode & 0o777).toBe(0o600);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
    expect(server.output()).toContain(server.tokenFile);
    expect(server.output()).not.toContain(server.token);
    // A restart reuses the token, so configured clients keep working.
    await server.stop();
    const again = await serve(home);
    expect(again.token).toBe(server.token);
  });

  it('refuses a request without the token, with a wrong token, or from a foreign Origin or Host', async () => {
    const server = await serve();
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const post = (extra: Record<string, string>) => fetch(server.url, { method: 'POST', headers: { ...headers, ...extra }, body: init });

    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post({ Authorization: 'Bearer not-the-token' })).status).toBe(401);
    expect((await post({ Authorization: `Basic ${server.token}` })).status).toBe(401);
    const auth = { Authorization: `Bearer ${server.token}` };
    expect((await post({ ...auth, Origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ ...auth, Origin: 'http://localhost.evil.example:1234' })).status).toBe(403);
    expect((await post({ ...auth, Origin: 'null' })).status).toBe(403);
    expect(await rawStatus(server.port, { ...headers, ...auth, Host: `rebound.example:${server.port}` }, init)).toBe(403);

    // The same request with the token and a loopback origin (or none) is served.
    expect((await post({ ...auth, Origin: `http://127.0.0.1:${server.port}` })).status).toBe(200);
    expect((await post(auth)).status).toBe(200);
    // The SDK client with a wrong token fails to connect at all.
    await expect(connectHttp(server.url, 'wrong', 'mallory')).rejects.toThrow();
  });

  it('listens on loopback only', async () => {
    const server = await serve();
    expect(server.bound).toBe(`127.0.0.1:${server.port}`);
    // The kernel's own table of listening sockets: this port is bound to 127.0.0.1, nowhere else.
    const listening = listeningAddresses(server.port);
    expect(listening).toEqual(['0100007F']);
    for (const address of externalAddresses()) expect(await connects(address, server.port)).toBe(false);
    expect(await connects('127.0.0.1', server.port)).toBe(true);
  });
});

/** http.request lets the test send a Host header that fetch would not. */
function rawStatus(port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Local addresses (hex, as /proc/net/tcp{,6} write them) with a LISTEN socket on this port. */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue;
      const [addr, p] = local.split(':');
      if (p === hexPort && addr) out.push(addr);
    }
  }
  return out;
}

function externalAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((i): i is os.NetworkInterfaceInfo => !!i && !i.internal && i.family === 'IPv4')
    .map((i) => i.address);
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}
