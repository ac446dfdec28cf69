import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  id: z.string(),
  status: z.literal('closed'),
  already_closed: z.boolean(),
  closed_at: z.string(),
  closed_by: z.string(),
});

export const closeRequestTool = defineTool({
  name: 'close_request',
  displayName: 'Close a request',
  family: 'requests',
  effects: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Close a request so it leaves the open lists. Only the agent who asked it or the agent it is addressed to can close it; closing one already closed changes nothing. Closing runs nothing. Refused for a connection that has no name.',
  input: z.strictObject({
    id: z.string().min(1).max(100).describe('The request id.'),
  }),
  confirm: (input) => ({ title: 'Close this request?', message: input.id }),
  run: (input, services, ctx) => services.requests.close(input, ctx.client),
});
