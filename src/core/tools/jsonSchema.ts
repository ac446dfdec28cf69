import { z } from 'zod';
import type { ToolDefinition } from './toolDefinition';

/** The JSON schema VS Code and MCP clients see, generated from the zod schema the handler validates with. */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  return withoutSafeIntegerBounds(schema) as Record<string, unknown>;
}

/**
 * zod writes every `.int()` as bounded by ±Number.MAX_SAFE_INTEGER: a bound no caller can
 * reach, which every chat request would still pay for in tokens. Real bounds stay.
 */
function withoutSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutSafeIntegerBounds);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = withoutSafeIntegerBounds(value);
  }
  return out;
}

/** Every refusal's shape (core/refusal.ts); a refusal may say more than these fields. */
const refusalOutput = z.object({
  ok: z.literal(false),
  reason: z.string(),
  budget: z.object({ limit: z.number(), used: z.number(), unit: z.enum(['characters', 'tokens', 'items', 'bytes', 'requests']) }).optional(),
});

/** Every answer the tool may give: its declared answer or a refusal (zod objects let other fields through). */
export function resultSchema(tool: ToolDefinition): z.ZodType {
  return z.union([tool.output, refusalOutput]);
}

/**
 * The MCP outputSchema: the tool's answer or a refusal, generated from zod like the input.
 * Its root says `type: object` because MCP requires structured content to be an object.
 */
export function outputJsonSchema(tool: ToolDefinition): { type: 'object'; [k: string]: unknown } {
  const schema = z.toJSONSchema(resultSchema(tool), { io: 'output', target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  return { type: 'object', ...(open(withoutSafeIntegerBounds(schema)) as Record<string, unknown>) };
}

/**
 * zod closes every object of an output schema (`additionalProperties: false`); an answer's
 * objects stay open so that a field added later does not make an older client reject the
 * answer. A map's `propertyNames: {type: string}` says nothing JSON does not, and is dropped.
 */
function open(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(open);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'propertyNames') continue;
    out[key] = open(value);
  }
  return out;
}

/**
 * The VS Code context key the extension sets while Recollect's MCP server is the window's tool
 * surface (host/toolSurface.ts): the contributed tools are then hidden, so no tool shows twice.
 * Unset before the extension starts, so the tools show by default.
 */
export const MCP_SURFACE_CONTEXT = 'recollect.mcpToolSurface';

/** `contributes.languageModelTools` for package.json, derived entirely from the registry. */
export function languageModelToolsManifest(tools: readonly ToolDefinition[]): object[] {
  return tools.map((t) => ({
    name: t.name,
    when: `!${MCP_SURFACE_CONTEXT}`,
    displayName: t.displayName,
    toolReferenceName: t.name,
    canBeReferencedInPrompt: true,
    icon: '$(database)',
    modelDescription: t.description,
    userDescription: firstSentence(t.description),
    tags: ['recollect', `recollect-${t.family}`],
    inputSchema: inputJsonSchema(t),
  }));
}

function firstSentence(text: string): string {
  const m = /^(.+?[.!?])(\s|$)/.exec(text);
  return (m?.[1] ?? text).replace(/`/g, '');
}
