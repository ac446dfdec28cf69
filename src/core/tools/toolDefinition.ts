import type { z } from 'zod';
import type { Services } from '../services';

/** Who is calling: the MCP client's own name, or the VS Code / CLI surface. Becomes the default `source`. */
export interface ToolContext {
  client: string;
  /** The caller's workspace folder (the MCP server's cwd, VS Code's first folder), used to find "this session". */
  workspace?: string | undefined;
  /** Set only by lcm_expand_query's in-process sub-agent loop; no surface can pass one in (see lcm/grants.ts). */
  expandGrant?: string | undefined;
  /** Who holds the database and whether the caller's process is it (see core/owner); memory_status reports it. */
  store?: StoreRole | undefined;
  /**
   * The caller opens a next session (chapters_continue, chapters_fork) in its own editor: a
   * VS Code window, the owner's or a client's, opens it where the person asked for it. Other
   * callers (an MCP server, the CLI) have no editor, so the owner's opener offers it, if any.
   */
  callerOpens?: boolean | undefined;
}

/** The store's owner (the one process that holds the database) as the caller's process sees it. */
export interface StoreRole {
  owner: { pid: number; kind: string; build: string };
  this_process: 'owner' | 'client';
  pid: number;
}

/** Families a person can switch on and off as a group. */
export type ToolFamily = 'memory' | 'history' | 'errors' | 'chapters' | 'lcm' | 'requests';

export interface Confirmation {
  title: string;
  message: string;
}

/**
 * What a call does to the world outside its answer, declared once per tool: the MCP
 * annotations (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) and VS Code's
 * confirmation before a call (`confirmationFor`) are both read from it. The activity log,
 * where every call is noted for a person to look at, is about the call, not an effect of it,
 * so it does not count here.
 */
export interface ToolEffects {
  /** Changes nothing a later call or a person can see: no fact, note, mark, request, file or chat. */
  readOnly: boolean;
  /** May overwrite or take away something that was there (a retired memory, a replaced answer); false means only additions. */
  destructive: boolean;
  /** A second call with the same arguments changes nothing more than the first did. */
  idempotent: boolean;
  /** May send the arguments or stored text beyond this machine's store: an embeddings endpoint or a language model. */
  openWorld: boolean;
}

export interface ToolDefinition<I extends z.ZodType = z.ZodType> {
  name: string;
  displayName: string;
  family: ToolFamily;
  /** What the model reads to decide when to call the tool. */
  description: string;
  input: I;
  /**
   * Every field a successful answer carries (a union where modes answer differently). Every
   * answer is either this or a refusal; the MCP outputSchema says both. Objects stay open, so a
   * field added later does not break a client validating against an older schema.
   */
  output: z.ZodType;
  effects: ToolEffects;
  /**
   * What VS Code shows before a write that changes what a person cares about. Only a tool that
   * is not read-only may have one; a destructive tool without one still asks (`confirmationFor`).
   */
  confirm?: (input: z.infer<I>) => Confirmation;
  run(input: z.infer<I>, services: Services, ctx: ToolContext): Promise<object> | object;
}

/** Keeps each tool module's input type tied to its schema without repeating it. */
export function defineTool<I extends z.ZodType>(def: ToolDefinition<I>): ToolDefinition<I> {
  return def;
}

/**
 * Whether (and how) VS Code asks the person before the call: a read-only tool never asks, a
 * destructive one always does, and any other write asks when its definition words a question.
 */
export function confirmationFor<I extends z.ZodType>(tool: ToolDefinition<I>, input: z.infer<I>): Confirmation | undefined {
  if (tool.effects.readOnly) return undefined;
  if (tool.confirm) return tool.confirm(input);
  if (tool.effects.destructive) return { title: `${tool.displayName}?`, message: `${tool.displayName} may overwrite or take away something stored in Recollect.` };
  return undefined;
}

/** The MCP tool annotations, read from the definition's declared effects. */
export function mcpAnnotations(tool: ToolDefinition): { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean } {
  const e = tool.effects;
  return { title: tool.displayName, readOnlyHint: e.readOnly, destructiveHint: !e.readOnly && e.destructive, idempotentHint: e.readOnly || e.idempotent, openWorldHint: e.openWorld };
}
