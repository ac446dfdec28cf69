import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { isRefusal } from '../core/refusal';
import type { Services } from '../core/services';
import { invokeTool } from '../core/tools/invoke';
import { inputJsonSchema } from '../core/tools/jsonSchema';
import { findTool, TOOLS } from '../core/tools/registry';

export const MCP_SERVER_NAME = 'recollect';

/**
 * The MCP surface: the same registry over stdio. The client names itself at initialize
 * (clientInfo.name, e.g. "claude-code"); that name becomes the default `source` of what it saves
 * and, later, the identity requests between agents are addressed to.
 */
export function createMcpServer(services: Services, version: string): Server {
  const server = new Server({ name: MCP_SERVER_NAME, version }, { capabilities: { tools: {} } });
  const clientName = () => server.getClientVersion()?.name || 'mcp-client';

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.displayName,
      description: t.description,
      inputSchema: inputJsonSchema(t) as { type: 'object'; [k: string]: unknown },
      annotations: { readOnlyHint: !t.confirm },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = findTool(request.params.name);
    if (!tool) {
      const reason = `unknown tool "${request.params.name}"; known: ${TOOLS.map((t) => t.name).join(', ')}`;
      return { content: [{ type: 'text' as const, text: JSON.stringify({ ok: false, reason }) }], isError: true };
    }
    const result = await invokeTool(tool, request.params.arguments ?? {}, services, { client: clientName(), workspace: process.cwd() });
    return { content: [{ type: 'text' as const, text: JSON.stringify(result) }], isError: isRefusal(result) };
  });
  return server;
}

export async function serveMcpStdio(services: Services, version: string): Promise<void> {
  const server = createMcpServer(services, version);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.close();
}
