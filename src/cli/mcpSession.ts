import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { NotRunError } from '../core/owner/ownerConnection';
import { MCP_NOT_RUN, type McpChannel, type McpSessionOptions } from '../core/owner/protocol';
import type { StoreAccess } from '../core/owner/storeAccess';
import { createMcpServer } from './mcpServer';

/**
 * The owner's side of a thin `recollect mcp` (mcpRelay.ts): one MCP server per relay, over its
 * socket, exactly as the relay's own process would have run it, with its store calls counted
 * and drained as a client's are. A call the owner did not run (it is handing the store over)
 * answers the JSON-RPC error MCP_NOT_RUN, which the relay never passes on: it asks the next owner.
 */
export function mcpSessionHook(version: string): (channel: McpChannel, access: StoreAccess, options: McpSessionOptions) => void {
  return (channel, access, options) => {
    const server = createMcpServer(notRunAsMcpError(access), version, options);
    const transport = new ChannelTransport(channel);
    void server.connect(transport).catch(() => channel.close());
  };
}

function notRunAsMcpError(access: StoreAccess): StoreAccess {
  const mapped = <T>(p: Promise<T>): Promise<T> =>
    p.catch((err: unknown) => {
      throw err instanceof NotRunError ? new McpError(MCP_NOT_RUN, err.message, { notRun: true }) : err;
    });
  return {
    callTool: (name, input, ctx) => mapped(access.callTool(name, input, ctx)),
    listResources: (offset, limit) => mapped(access.listResources(offset, limit)),
    readResource: (uri) => mapped(access.readResource(uri)),
    connectionSeen: (name) => mapped(access.connectionSeen(name)),
  };
}

/** An MCP transport over a relay's channel: each line a JSON-RPC message, validated as the stdio transport validates its own. */
class ChannelTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly channel: McpChannel) {}

  start(): Promise<void> {
    this.channel.onclose = () => this.onclose?.();
    this.channel.onmessage = (raw) => {
      const parsed = JSONRPCMessageSchema.safeParse(raw);
      if (parsed.success) this.onmessage?.(parsed.data);
      else this.onerror?.(new Error(`a relay sent a message that is not JSON-RPC: ${parsed.error.message}`));
    };
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.channel.send(message);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.channel.close();
    return Promise.resolve();
  }
}

/**
 * The session of a relay that loaded the full server (it won the election, or its owner runs no
 * MCP sessions): the same MCP server, over this process's store link, fed the relay's messages.
 */
export function localMcpSession(access: StoreAccess, version: string, options: McpSessionOptions, toClient: (message: Record<string, unknown>) => void): { send(message: Record<string, unknown>): void; close(): Promise<void> } {
  const server = createMcpServer(access, version, options);
  const transport = new DirectTransport(toClient);
  const connected = server.connect(transport);
  return {
    send: (message) => void connected.then(() => transport.deliver(message)),
    close: () => server.close(),
  };
}

class DirectTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly toClient: (message: Record<string, unknown>) => void) {}

  start(): Promise<void> {
    return Promise.resolve();
  }

  deliver(raw: unknown): void {
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (parsed.success) this.onmessage?.(parsed.data);
    else this.onerror?.(new Error(`the client sent a message that is not JSON-RPC: ${parsed.error.message}`));
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.toClient(message as Record<string, unknown>);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}
