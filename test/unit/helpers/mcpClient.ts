import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const CLI = path.resolve(__dirname, '../../../dist/cli.js');

export interface McpSession {
  client: Client;
  transport: StdioClientTransport;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The official MCP SDK client, talking to our real server process over stdio (`args` and `env` are added to the server's). */
export async function connectMcp(home: string, clientName = 'vitest-agent', extra: { args?: string[]; env?: Record<string, string> } = {}): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...(extra.args ?? [])],
    env: { ...process.env, RECOLLECT_HOME: home, ...extra.env } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    async call(name, args) {
      const res = await client.callTool({ name, arguments: args });
      const content = res.content as { type: string; text: string }[];
      return JSON.parse(content[0]?.text ?? '{}') as Record<string, unknown>;
    },
    close: () => client.close(),
  };
}
