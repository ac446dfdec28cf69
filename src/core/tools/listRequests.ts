import { z } from 'zod';
import { scopeField } from './commonFields';
import { defineTool } from './toolDefinition';

export const listRequestsTool = defineTool({
  name: 'list_requests',
  displayName: 'List requests',
  family: 'requests',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  description:
    "Requests this connection is a party to, in full, newest first, at most 20. Without `to`: the requests addressed to this connection; with `to`: only those between this connection and that agent, either way. `status` is open (default), answered or closed. `more_requests` counts older ones: pass `before` the id of the last one listed to see them. Other agents' text is marked untrusted. Lists only; runs nothing. Refused for a connection that has no name.",
  input: z.strictObject({
    status: z.enum(['open', 'answered', 'closed']).optional().describe('open (default): not yet answered; answered; closed.'),
    to: z.string().min(1).max(100).optional().describe('Only requests between this connection and this agent.'),
    scope: scopeField.optional().describe('Only requests in this scope.'),
    before: z.string().min(1).max(100).optional().describe('Only requests older than this request id (the last one the previous call listed).'),
  }),
  run: (input, services, ctx) => services.requests.list(input, ctx.client),
});
