import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import type { Services } from '../../../src/core/services';

/** Calls a tool exactly as every surface does: zod validation, then the handler, over real services. */
export async function callTool(services: Services, name: string, input: unknown, client = 'vitest'): Promise<Record<string, unknown>> {
  const tool = findTool(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return (await invokeTool(tool, input, services, { client })) as Record<string, unknown>;
}
