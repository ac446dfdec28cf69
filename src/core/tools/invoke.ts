import type { z } from 'zod';
import { refuse, type Refusal } from '../refusal';
import type { Services } from '../services';
import type { ToolContext, ToolDefinition } from './toolDefinition';

/**
 * Validates the raw input against the tool's schema and runs it. Invalid input becomes a
 * refusal that says which argument and, for a limit, by how much — never a silent cut.
 * Internal failures (a broken store) are thrown, so each surface can report them as such.
 */
export async function invokeTool(tool: ToolDefinition, raw: unknown, services: Services, ctx: ToolContext): Promise<object> {
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) return inputRefusal(tool.name, parsed.error, raw);
  const result = await tool.run(parsed.data, services, ctx);
  if ((result as { ok?: unknown }).ok !== false) {
    // The action log is history, not memory: failing to record it must not fail the call.
    try {
      await services.importer.recordInvocation({ client: ctx.client, workspace: ctx.workspace, tool: tool.name, input: parsed.data, result });
    } catch {
      // Deliberately ignored (see above).
    }
  }
  return result;
}

function inputRefusal(toolName: string, error: z.ZodError, raw: unknown): Refusal {
  const first = error.issues[0];
  const messages = error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'input'}: ${i.message}`);
  if (first?.code === 'too_big') {
    const value = valueAt(raw, first.path);
    const used = typeof value === 'string' || Array.isArray(value) ? value.length : typeof value === 'number' ? value : undefined;
    const limit = Number(first.maximum);
    if (used !== undefined && Number.isFinite(limit)) {
      const unit = typeof value === 'string' ? 'characters' : Array.isArray(value) ? 'items' : 'items';
      const field = first.path.join('.');
      return refuse(
        `${toolName}: ${field} is ${used} ${unit}, over the limit of ${limit}. It was refused, not cut, and nothing was written.`,
        { limit, used, unit },
      );
    }
  }
  return refuse(`${toolName}: invalid input: ${messages.join('; ')}. Nothing was written.`);
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
