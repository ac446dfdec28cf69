import { expect } from 'vitest';
import type { Services } from '../../../src/core/services';
import { invokeTool } from '../../../src/core/tools/invoke';
import { resultSchema } from '../../../src/core/tools/jsonSchema';
import { findTool } from '../../../src/core/tools/registry';
import type { ToolContext } from '../../../src/core/tools/toolDefinition';

/** Calls a tool in process and checks its answer against the result schema MCP lists as its outputSchema. */
export async function checkedCall(s: Services, name: string, input: object, ctx: ToolContext): Promise<Record<string, unknown>> {
  const tool = findTool(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = (await invokeTool(tool, input, s, ctx)) as Record<string, unknown>;
  const checked = resultSchema(tool).safeParse(result);
  expect(checked.success, `${name} answered outside its output schema: ${checked.error?.message}`).toBe(true);
  return result;
}
