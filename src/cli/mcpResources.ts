import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { isRefusal } from '../core/refusal';
import { CHAPTER_URI_PREFIX, listMemoryResources, NOTE_URI_PREFIX, readMemoryResource } from '../core/resources/memoryResources';
import type { Services } from '../core/services';

const PAGE = 100;
/** MCP's "resource not found" error code (server/resources, error handling). */
const RESOURCE_NOT_FOUND = -32002;

/** Vault notes and archived chapters as MCP resources, over the server's services. */
export function serveResources(server: Server, ready: Promise<Services>): void {
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const cursor = request.params?.cursor;
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(offset) || offset < 0) throw new McpError(ErrorCode.InvalidParams, `cursor "${String(cursor).slice(0, 40)}" is not one this server gave`);
    const page = listMemoryResources(await ready, offset, PAGE);
    return { resources: page.resources, ...(page.next !== undefined ? { nextCursor: String(page.next) } : {}) };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: `${NOTE_URI_PREFIX}{+path}`, name: 'note', title: 'A note of the memory vault', mimeType: 'text/markdown' },
      { uriTemplate: `${CHAPTER_URI_PREFIX}{id}`, name: 'chapter', title: 'An archived chapter', mimeType: 'text/markdown' },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const read = readMemoryResource(await ready, request.params.uri);
    if (isRefusal(read)) throw new McpError(RESOURCE_NOT_FOUND, read.reason, { uri: request.params.uri });
    return { contents: [{ uri: request.params.uri, mimeType: 'text/markdown', text: read.text }] };
  });
}
