import { z } from 'zod';
import { REQUEST_TEXT_MAX } from '../requests/requestService';
import { scopeField } from './commonFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  id: z.string(),
  from: z.string(),
  to: z.string(),
  scope: z.string(),
  status: z.literal('open'),
  asked_at: z.string(),
  this_hour: z.object({
    limit: z.number(),
    used: z.number(),
    unit: z.literal('requests'),
  }),
  note: z.string(),
});

export const askAgentTool = defineTool({
  name: 'ask_agent',
  displayName: 'Ask another agent',
  family: 'requests',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    "Record a request for another agent that uses this memory. It runs no tool, writes no memory and wakes nobody: that agent sees it in whats_new at the start of its next task and answers only if its own rules say to. `to` is the other agent's connection name (its MCP client name, or \"copilot\" for Copilot in VS Code); it must have connected before. A connection may record 30 requests an hour by default; over the limit the call is refused with the measured numbers. Refused for a connection that has no name.",
  input: z.strictObject({
    to: z.string().min(1).max(100).describe("The other agent's connection name, e.g. \"claude-code\" or \"copilot\". It must have connected to this memory."),
    request: z.string().min(1).max(REQUEST_TEXT_MAX).describe('What you are asking, in plain words (up to 4,000 characters; longer is refused, never cut).'),
    scope: scopeField.optional().describe('The scope the request belongs to: "global" (default) or "project:<slug>".'),
  }),
  confirm: (input) => ({ title: `Leave a request for ${input.to}?`, message: input.request }),
  run: (input, services, ctx) => services.requests.ask(input, ctx.client),
});
