import { z } from 'zod';
import { scopeField } from './commonFields';
import { untrustedText } from './outputFields';
import { defineTool } from './toolDefinition';

const status = z.enum(['answered', 'open', 'closed']);
const listed = z.object({
  ok: z.literal(true),
  connection: z.string(),
  status,
  notice: z.string(),
  next_before: z.string().optional(),
  requests: z.array(
    z.object({
      id: z.string(),
      from: z.string(),
      to: z.string(),
      status,
      scope: z.string(),
      asked_at: z.string(),
      request: untrustedText,
      answer: untrustedText.nullable(),
      answered_at: z.string().nullable(),
      answers: z.number(),
      closed_at: z.string().nullable(),
      closed_by: z.string().nullable(),
    }),
  ),
  shown: z.number(),
  more_requests: z.number(),
});
/** The requests addressed to this connection, or (with `to`) those between it and one agent. */
const output = z.union([listed.extend({ addressed_to: z.string() }), listed.extend({ between: z.array(z.string()) })]);

export const listRequestsTool = defineTool({
  name: 'list_requests',
  displayName: 'List requests',
  family: 'requests',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
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
