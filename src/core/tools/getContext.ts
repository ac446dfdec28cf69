import { z } from 'zod';
import { scopeField } from './commonFields';
import { defineTool } from './toolDefinition';

export const getContextTool = defineTool({
  name: 'get_context',
  displayName: 'Get memory context',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  description:
    'Primary read: call before substantive work with the current request. Returns current facts first (standing rules/policy/approval facts first of all when the request asks whether something may be done), then the closest notes, packed into `max_tokens` counted by a real tokenizer and never exceeded: the reply reports `budget` {requested, used, remaining} and `left_out` counts for what did not fit (a note cut to fit is marked `truncated`; read_memory returns it whole). `include_history` adds superseded values labelled "historical". Omit `query` for a compact profile of current memory. `index.stale` says the Markdown vault changed since it was indexed (run index_memory).',
  input: z.strictObject({
    query: z.string().min(1).max(1000).optional().describe('The current request or task (up to 1,000 characters). Omit only for a compact current-memory profile.'),
    scope: scopeField.optional(),
    max_tokens: z.number().int().min(128).max(4000).optional().describe('Token budget for the whole reply, 128 to 4,000. Default 800.'),
    include_history: z.boolean().optional().describe('Also return superseded values, labelled historical. Default false.'),
  }),
  run: (input, services) => services.recall.getContext(input),
});
