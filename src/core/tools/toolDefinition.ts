import type { z } from 'zod';
import type { Services } from '../services';

/** Who is calling: the MCP client's own name, or the VS Code / CLI surface. Becomes the default `source`. */
export interface ToolContext {
  client: string;
  /** The caller's workspace folder (the MCP server's cwd, VS Code's first folder), used to find "this session". */
  workspace?: string | undefined;
  /** Set only by lcm_expand_query's in-process sub-agent loop; no surface can pass one in (see lcm/grants.ts). */
  expandGrant?: string | undefined;
}

/** Families a person can switch on and off as a group. */
export type ToolFamily = 'memory' | 'history' | 'errors' | 'chapters' | 'lcm' | 'requests';

export interface Confirmation {
  title: string;
  message: string;
}

export interface ToolDefinition<I extends z.ZodType = z.ZodType> {
  name: string;
  displayName: string;
  family: ToolFamily;
  /** What the model reads to decide when to call the tool. */
  description: string;
  input: I;
  /** Set for writes that change what a person cares about: VS Code asks the person first. */
  confirm?: (input: z.infer<I>) => Confirmation;
  run(input: z.infer<I>, services: Services, ctx: ToolContext): Promise<object> | object;
}

/** Keeps each tool module's input type tied to its schema without repeating it. */
export function defineTool<I extends z.ZodType>(def: ToolDefinition<I>): ToolDefinition<I> {
  return def;
}
