import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isRefusal } from '../core/refusal';
import { resourcesNamedIn } from '../core/resources/memoryResources';
import { inputJsonSchema, outputJsonSchema } from '../core/tools/jsonSchema';
import { mcpAnnotations, type ToolDefinition } from '../core/tools/toolDefinition';

/** One registry tool as MCP lists it: schemas generated from zod, annotations from its declared effects. */
export function listedTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.displayName,
    description: tool.description,
    inputSchema: inputJsonSchema(tool) as Tool['inputSchema'],
    outputSchema: outputJsonSchema(tool),
    annotations: mcpAnnotations(tool),
  };
}

/**
 * A tool's answer as an MCP result: the object as `structuredContent`, and the same JSON as
 * text for clients that read only `content`, followed by a resource link for each note and
 * chapter the answer names. A refusal is a tool execution error (`isError`), which the model
 * reads and can correct, as the spec asks of invalid arguments too.
 */
export function toolResult(result: object): CallToolResult {
  const structured = Array.isArray(result) ? { items: result } : (result as Record<string, unknown>);
  const refused = isRefusal(result);
  const links = refused ? [] : resourcesNamedIn(result).map((r) => ({ type: 'resource_link' as const, ...r }));
  return { content: [{ type: 'text', text: JSON.stringify(result) }, ...links], structuredContent: structured, isError: refused };
}
