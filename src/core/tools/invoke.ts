import type { z } from 'zod';
import type { ToolCall } from '../activity/activityLog';
import { HISTORY_SCOPE } from '../privacy/redaction';
import { refuse, type Refusal } from '../refusal';
import type { Services } from '../services';
import { WriteRefusedError } from '../store/errors';
import type { ToolContext, ToolDefinition } from './toolDefinition';

/**
 * Validates the raw input against the tool's schema and runs it. Invalid input becomes a
 * refusal that says which argument and, for a limit, by how much — never a silent cut.
 * Internal failures (a broken store) are thrown, so each surface can report them as such; a
 * write the store refused (a full disk, a read-only folder) is an answer, not a failure.
 * Every call, answered, refused or failed, is noted in the activity log (never in the history).
 */
export async function invokeTool(tool: ToolDefinition, raw: unknown, services: Services, ctx: ToolContext): Promise<object> {
  const started = performance.now();
  const note = (input: unknown, outcome: { result: object } | { error: string }) =>
    noteActivity(services, { client: ctx.client, tool: tool.name, input, ...outcome, ms: performance.now() - started });
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) {
    const refusal = inputRefusal(tool.name, parsed.error, raw);
    await note(raw, { result: refusal });
    return refusal;
  }
  let result: object;
  try {
    result = await tool.run(parsed.data, services, ctx);
  } catch (err) {
    if (err instanceof WriteRefusedError) result = refusalOf(err);
    else {
      await note(parsed.data, { error: (err as Error).message ?? String(err) });
      throw err;
    }
  }
  await note(parsed.data, { result });
  return result;
}

/** The activity log is for a person to look at, not memory: failing to record a call must not fail it. */
async function noteActivity(services: Services, call: ToolCall): Promise<void> {
  try {
    // The log keeps what was asked and answered less its secrets (a remembered password, a token in a command), redacted before it is excerpted.
    await services.activity.record(await services.redaction.value(call, HISTORY_SCOPE));
  } catch {
    // Deliberately ignored (see above).
  }
}

export function refusalOf(err: WriteRefusedError): Refusal {
  return refuse(err.reason, err.budget);
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
