import { z } from 'zod';
import { scopeField } from './commonFields';
import { factFields, indexState, tokenBudget } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  mode: z.enum(['query', 'profile']),
  door: z.string(),
  note: z.string().optional(),
  scope: z.string().optional(),
  rules_first: z.literal(true).optional(),
  semantic: z.union([z.object({ model: z.string() }), z.object({ off: z.string() })]).optional(),
  facts: z.array(
    factFields.extend({
      valid_from: z.string(),
      valid_to: z.string().optional(),
      status: z.enum(['current', 'historical']),
    }),
  ),
  notes: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['entry', 'note']),
      scope: z.string(),
      created_at: z.string(),
      text: z.string(),
      chunk: z.number().optional(),
      truncated: z.literal(true).optional(),
      full_tokens: z.number().optional(),
    }),
  ),
  budget: tokenBudget,
  left_out: z.object({ facts: z.number(), notes: z.number(), unranked_matches: z.number().optional() }),
  index: indexState,
});

export const getContextTool = defineTool({
  name: 'get_context',
  displayName: 'Get memory context',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Primary read: call before substantive work with the current request. Returns current facts first (standing rules/policy/approval facts first of all when the request asks whether something may be done), then the closest notes, packed into `max_tokens` counted by a real tokenizer and never exceeded: the reply reports `budget` {requested, used, remaining} and `left_out` counts for what did not fit (a note cut to fit is marked `truncated`; read_memory returns it whole). `include_history` adds superseded values labelled "historical". Omit `query` for a compact profile of current memory. `index.stale` says the Markdown vault changed since it was indexed (run index_memory). `door`: this machine\'s store, a team\'s pool mirror, or both.',
  input: z.strictObject({
    query: z.string().min(1).max(1000).optional().describe('The current request or task (up to 1,000 characters). Omit only for a compact current-memory profile.'),
    scope: scopeField.optional(),
    max_tokens: z.number().int().min(128).max(4000).optional().describe('Token budget for the whole reply, 128 to 4,000. Default 800.'),
    include_history: z.boolean().optional().describe('Also return superseded values, labelled historical. Default false.'),
  }),
  run: (input, services) => services.recall.getContext(input),
});
