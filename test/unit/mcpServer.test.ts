import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/core/tools/registry';
import { connectMcp } from './helpers/mcpClient';
import { tempHome } from './helpers/tempStore';

describe('MCP server over stdio (official SDK client)', () => {
  it('lists every registry tool with its JSON schema and answers calls', async () => {
    const mcp = await connectMcp(tempHome('mcp'), 'claude-code');
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
      const remember = tools.find((t) => t.name === 'remember');
      expect(remember?.inputSchema.required).toEqual(['statement']);

      const saved = await mcp.call('remember', { statement: 'Use pnpm in this repo', subject: 'package manager', predicate: 'is', object: 'pnpm' });
      // The connecting client's own name becomes the default source.
      expect(saved).toMatchObject({ ok: true, source: 'claude-code' });
      const found = await mcp.call('retrieve_memory', { subject: 'Package Manager' });
      expect(found.values).toEqual([expect.objectContaining({ object: 'pnpm', source: 'claude-code' })]);

      const refused = await mcp.client.callTool({ name: 'remember', arguments: { statement: 'y'.repeat(4100) } });
      expect(refused.isError).toBe(true);
      const body = JSON.parse((refused.content as { text: string }[])[0]!.text) as Record<string, unknown>;
      expect(body).toMatchObject({ ok: false, budget: { limit: 4000, used: 4100 } });
    } finally {
      await mcp.close();
    }
  });

  it('answers the handshake and the tool list before the store opens, and a store that cannot open fails each call, not the server', async () => {
    // A store home that is a file cannot be opened; the server must still connect and say why per call.
    const home = path.join(tempHome('mcp-broken'), 'not-a-folder');
    fs.writeFileSync(home, 'x');
    const mcp = await connectMcp(home, 'claude-code');
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.length).toBe(TOOLS.length);
      await expect(mcp.client.callTool({ name: 'memory_status', arguments: {} })).rejects.toThrow(/not-a-folder|ENOTDIR|EEXIST/);
    } finally {
      await mcp.close();
    }
  });
});
