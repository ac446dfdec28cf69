import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { isRefusal } from '../core/refusal';
import { CHAPTER_URI_PREFIX, NOTE_URI_PREFIX } from '../core/resources/memoryResources';
import type { StoreAccess } from '../core/owner/storeAccess';

const PAGE = 100;
/** MCP's "resource not found" error code (server/resources, error handling). */
const RESOURCE_NOT_FOUND = -32002;

/** Vault notes and archived chapters as MCP resources, over the server's store (its own or its owner's). */
export function serveResources(server: Server, store: StoreAccess): void {
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const cursor = request.params?.cursor;
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(offset) || offset < 0) throw new McpError(ErrorCode.InvalidParams, `cursor "${String(cursor).slice(0, 40)}" is not one this server gave`);
    const page = await store.listResources(offset, PAGE);
    return { resources: page.resources, ...(page.next !== undefined ? { nextCursor: String(page.next) } : {}) };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: `${NOTE_URI_PREFIX}{+path}`, name: 'note', title: 'A note of the memory vault', mimeType: 'text/markdown' },
      { uriTemplate: `${CHAPTER_URI_PREFIX}{id}`, name: 'chapter', title: 'An archived chapter', mimeType: 'text/markdown' },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const read = await store.readResource(request.params.uri);
    if (isRefusal(read)) throw new McpError(RESOURCE_NOT_FOUND, read.reason, { uri: request.params.uri });
    return { contents: [{ uri: request.params.uri, mimeType: 'text/markdown', text: read.text }] };
  });
}
