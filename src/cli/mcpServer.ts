import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { BoundedStdioTransport } from './boundedStdio';
import { warmTokenizer } from '../core/text/tokens';
import { UNNAMED_CONNECTION } from '../core/requests/connectionName';
import { canonicalClientName } from '../core/requests/knownClients';
import type { Services } from '../core/services';
import { isStoreAccess, localAccess, type StoreAccess } from '../core/owner/storeAccess';
import { findTool, TOOLS } from '../core/tools/registry';
import { serveResources } from './mcpResources';
import { listedTool, toolResult } from './mcpTools';

export const MCP_SERVER_NAME = 'recollect';

export interface McpServerOptions {
  /** `--name`: the connection's name, whatever the client calls itself. */
  connectionName?: string | undefined;
  /** The folder "this session" is looked for in; the server's cwd by default. */
  workspace?: string | undefined;
}

/**
 * One MCP server over the registry, for one connection. stdio makes one per process; HTTP one
 * per session, all over the same services. The connection is named by `--name` (or, over HTTP,
 * the name the person gave the connection), else by the client's own clientInfo.name, a known
 * client's under its one name (knownClients.ts); that name is the default `source` of what it
 * saves and the identity requests between agents are addressed to. A client that sent no name
 * still works (its writes are labelled "mcp-client") but the request tools refuse it.
 */
export function createMcpServer(services: Services | Promise<Services> | StoreAccess, version: string, options: McpServerOptions = {}): Server {
  const server = new Server({ name: MCP_SERVER_NAME, version }, { capabilities: { tools: {}, resources: {} } });
  // The handshake and the tool list need no store, so a large store opening (seconds at a
  // gigabyte) does not hold up the client; only tool calls wait for it. The store is this
  // process's own or its owner's (core/owner): the calls are the same.
  const store = isStoreAccess(services) ? services : localAccess(services);
  const clientName = () => options.connectionName?.trim() || canonicalClientName(server.getClientVersion()?.name ?? '') || UNNAMED_CONNECTION;
  // A broken store is reported by the call itself; noting the connection must never fail one.
  const noteConnection = () => store.connectionSeen(clientName()).catch(() => undefined);
  server.oninitialized = () => void noteConnection();

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map(listedTool) }));
  serveResources(server, store);

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = findTool(request.params.name);
    // The spec makes an unknown tool a protocol error (invalid params), not a tool result.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"; known: ${TOOLS.map((t) => t.name).join(', ')}`);
    await noteConnection();
    const result = await store.callTool(tool.name, request.params.arguments ?? {}, { client: clientName(), workspace: options.workspace ?? process.cwd() });
    return toolResult(result);
  });
  return server;
}

export async function serveMcpStdio(services: Services | Promise<Services> | StoreAccess, version: string, options: McpServerOptions = {}): Promise<void> {
  const server = createMcpServer(services, version, options);
  // Not the SDK's StdioServerTransport: it drops the connection on a request over 10 MiB.
  const transport = new BoundedStdioTransport();
  await server.connect(transport);
  // The tokenizer's tables cost tens of MB: only a process that runs the tools (not a store owner's client) loads them.
  if (!isStoreAccess(services)) warmTokenizer();
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.close();
}
