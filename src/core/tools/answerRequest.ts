import { z } from 'zod';
import { REQUEST_TEXT_MAX } from '../requests/requestService';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  id: z.string(),
  status: z.literal('answered'),
  answered_at: z.string(),
  replaced_answer_of: z.string().nullable(),
  to: z.string(),
  note: z.string(),
});

export const answerRequestTool = defineTool({
  name: 'answer_request',
  displayName: 'Answer a request',
  family: 'requests',
  effects: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  output,
  description:
    'Record an answer on a request addressed to this connection; the asker reads it in whats_new or list_requests. Only the agent the request is addressed to can answer it; answering again replaces the earlier answer; a closed request takes no answer. Recording runs nothing. Refused for a connection that has no name.',
  input: z.strictObject({
    id: z.string().min(1).max(100).describe('The request id, from whats_new or list_requests.'),
    answer: z.string().min(1).max(REQUEST_TEXT_MAX).describe('The answer, in plain words (up to 4,000 characters; longer is refused, never cut).'),
  }),
  confirm: (input) => ({ title: 'Record this answer?', message: input.answer }),
  run: (input, services, ctx) => services.requests.answer(input, ctx.client),
});
