import { refuse, type Refusal } from '../refusal';
import { listMemoryResources, readMemoryResource, type ResourcePage } from '../resources/memoryResources';
import type { Services } from '../services';
import { invokeTool } from '../tools/invoke';
import { findTool } from '../tools/registry';
import type { ToolContext } from '../tools/toolDefinition';

/**
 * What a surface (the MCP server, the CLI) needs of the store, whether this process holds the
 * database (the owner) or forwards to the process that does (a client): see storeLink.ts.
 */
export interface StoreAccess {
  callTool(name: string, input: unknown, ctx: ToolContext): Promise<object>;
  listResources(offset: number, limit: number): Promise<ResourcePage>;
  readResource(uri: string): Promise<{ text: string } | Refusal>;
  connectionSeen(name: string): Promise<void>;
}

/** Services this process opened itself, as a StoreAccess (tests and in-process callers). */
export function localAccess(services: Services | Promise<Services>): StoreAccess {
  const ready = Promise.resolve(services);
  return {
    async callTool(name, input, ctx) {
      const tool = findTool(name);
      if (!tool) return refuse(`unknown tool "${name}"`);
      return invokeTool(tool, input, await ready, ctx);
    },
    listResources: async (offset, limit) => listMemoryResources(await ready, offset, limit),
    readResource: async (uri) => readMemoryResource(await ready, uri),
    connectionSeen: async (name) => (await ready).requests.connections.seen(name),
  };
}

export function isStoreAccess(x: unknown): x is StoreAccess {
  return typeof (x as StoreAccess | undefined)?.callTool === 'function';
}
