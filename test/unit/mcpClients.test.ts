import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalClientName } from '../../src/core/requests/knownClients';
import { TOOLS } from '../../src/core/tools/registry';
import { confirmationFor, mcpAnnotations } from '../../src/core/tools/toolDefinition';
import { connectMcp, type McpSession } from './helpers/mcpClient';
import { connectHttp, startServe, type ServeProcess } from './helpers/mcpHttp';
import { tempHome } from './helpers/tempStore';

/** Tools that write (a mark, a log, a candidate, an index) although they ask no confirmation. */
const WRITES_WITHOUT_CONFIRMATION = ['write_error', 'write_result', 'chapters_rule_propose', 'index_memory', 'whats_new', 'preview_import'];

describe('each tool declares its effects once; MCP annotations and VS Code confirmations come from them', () => {
  it('a read-only tool asks nothing, a destructive one always asks, and a question is worded only for a write', () => {
    for (const tool of TOOLS) {
      const e = tool.effects;
      if (e.readOnly) {
        expect(tool.confirm, `${tool.name} is read-only but words a confirmation`).toBeUndefined();
        expect(e.destructive, `${tool.name} is read-only and destructive`).toBe(false);
        expect(confirmationFor(tool, {})).toBeUndefined();
      }
      if (e.destructive) expect(confirmationFor(tool, { id: 'note:x.md', batchId: 'b', answer: 'a' }), `${tool.name} is destructive and asks nothing`).toBeDefined();
    }
    for (const name of WRITES_WITHOUT_CONFIRMATION) expect(TOOLS.find((t) => t.name === name)?.effects.readOnly, name).toBe(false);
    expect(TOOLS.find((t) => t.name === 'retire_memory')?.effects.destructive).toBe(true);
  });
});

describe('known clients have one connection name whatever they call themselves', () => {
  it('maps what Codex, Cursor, Gemini CLI, Claude Desktop and VS Code send, and keeps any other name as sent', () => {
    expect(canonicalClientName('codex-mcp-client')).toBe('codex');
    expect(canonicalClientName('Codex')).toBe('codex');
    expect(canonicalClientName('cursor-vscode')).toBe('cursor');
    expect(canonicalClientName('gemini-cli-mcp-client')).toBe('gemini-cli');
    expect(canonicalClientName('claude-ai')).toBe('claude-desktop');
    expect(canonicalClientName('claude-code')).toBe('claude-code');
    expect(canonicalClientName('Visual Studio Code')).toBe('copilot');
    expect(canonicalClientName(' my-agent ')).toBe('my-agent');
    expect(canonicalClientName('')).toBe('');
  });
});

describe('MCP clients over stdio (official SDK client, real server process)', () => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await connectMcp(tempHome('mcp-clients'), 'codex-mcp-client');
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('lists every tool with annotations from its effects and an output schema', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools).toHaveLength(TOOLS.length);
    for (const def of TOOLS) {
      const listed = tools.find((t) => t.name === def.name);
      expect(listed?.annotations, def.name).toEqual(mcpAnnotations(def));
      expect(listed?.outputSchema?.type, def.name).toBe('object');
    }
    for (const name of WRITES_WITHOUT_CONFIRMATION) expect(tools.find((t) => t.name === name)?.annotations?.readOnlyHint, name).toBe(false);
    expect(tools.find((t) => t.name === 'retire_memory')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tools.find((t) => t.name === 'get_context')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('every tool answers with structuredContent that its outputSchema accepts, and the same JSON as text', async () => {
    await mcp.client.listTools(); // the SDK client validates structuredContent against the listed outputSchema
    for (const def of TOOLS) {
      const res = await mcp.client.callTool({ name: def.name, arguments: {} });
      const text = (res.content as { type: string; text: string }[])[0]?.text ?? '';
      expect(res.structuredContent, def.name).toEqual(JSON.parse(text));
    }
    const saved = await mcp.client.callTool({ name: 'remember', arguments: { statement: 'CI runs on both VS Code versions' } });
    expect(saved.isError).toBe(false);
    expect(saved.structuredContent).toMatchObject({ ok: true });
  });

  it('an unknown tool is a protocol error (-32602); invalid arguments are a tool error the model can read', async () => {
    const unknown = await mcp.client.callTool({ name: 'no_such_tool', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32602);
    expect((unknown as McpError).message).toContain('no_such_tool');

    const invalid = await mcp.client.callTool({ name: 'remember', arguments: { statement: 42 } });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toMatchObject({ ok: false, reason: expect.stringContaining('statement') });
  });

  it('Codex is "codex" over stdio whatever it calls itself', async () => {
    expect(await mcp.call('remember', { statement: 'stdio codex' })).toMatchObject({ ok: true, source: 'codex' });
  });
});

describe('MCP clients over HTTP (recollect serve)', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(tempHome('serve-clients'));
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('the OAuth discovery documents are not found, without a token, so a client reports the missing token', async () => {
    const origin = `http://127.0.0.1:${serve.port}`;
    for (const p of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/mcp',
      '/.well-known/openid-configuration',
      '/.well-known/openid-configuration/mcp',
      '/mcp/.well-known/openid-configuration',
    ]) {
      const res = await fetch(origin + p);
      expect(res.status, p).toBe(404);
      expect(((await res.json()) as { reason: string }).reason, p).toContain('bearer token');
    }
    const noToken = await fetch(serve.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(noToken.status).toBe(401);
    await noToken.body?.cancel();
  });

  it('Codex is "codex" over HTTP too, and a person can name a connection in the URL or a header', async () => {
    const codex = await connectHttp(serve.url, serve.token, 'codex-mcp-client');
    try {
      expect(await codex.call('remember', { statement: 'http codex' })).toMatchObject({ ok: true, source: 'codex' });
      const listed = await codex.client.listTools();
      expect(listed.tools.find((t) => t.name === 'whats_new')?.annotations?.readOnlyHint).toBe(false);
    } finally {
      await codex.close();
    }
    const byQuery = await connectHttp(`${serve.url}?name=reviewer`, serve.token, 'some-client');
    try {
      expect(await byQuery.call('remember', { statement: 'named in the URL' })).toMatchObject({ ok: true, source: 'reviewer' });
    } finally {
      await byQuery.close();
    }
    const byHeader = await connectHttpWithHeader(serve, 'x-recollect-connection', 'planner');
    try {
      expect(await byHeader.call('remember', { statement: 'named in a header' })).toMatchObject({ ok: true, source: 'planner' });
    } finally {
      await byHeader.close();
    }
    const bad = await fetch(`${serve.url}?name=${encodeURIComponent('x'.repeat(101))}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('over the limit of 100');
  });
});

async function connectHttpWithHeader(serve: ServeProcess, header: string, value: string) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const transport = new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: { headers: { Authorization: `Bearer ${serve.token}`, [header]: value } } });
  const client = new Client({ name: 'some-client', version: '1.0.0' });
  await client.connect(transport);
  return {
    async call(name: string, args: Record<string, unknown>) {
      const res = await client.callTool({ name, arguments: args });
      return res.structuredContent as Record<string, unknown>;
    },
    close: () => client.close(),
  };
}
