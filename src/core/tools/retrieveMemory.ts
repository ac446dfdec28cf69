import { z } from 'zod';
import { scopeField } from './commonFields';
import { factFields } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  subject: z.string(),
  values: z.array(factFields.extend({
    valid_from: z.string(),
    valid_to: z.string().nullable(),
    status: z.enum(['current', 'historical']),
    superseded_at: z.string().nullable(),
    superseded_by: z.string().nullable(),
  })),
  count: z.number(),
  as_of: z.string().optional(),
  note: z.string().optional(),
});

export const retrieveMemoryTool = defineTool({
  name: 'retrieve_memory',
  displayName: 'Retrieve memory',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'The current value(s) for a subject, matched regardless of case and spacing. `predicate` narrows to one property; `include_history` adds superseded values labelled "historical"; `as_of` (ISO instant) returns the values valid at that time; `scope` restricts to one scope (all scopes when omitted).',
  input: z.strictObject({
    subject: z.string().min(1).max(500).describe('The subject to look up.'),
    predicate: z.string().min(1).max(200).optional().describe('Only this predicate.'),
    include_history: z.boolean().optional().describe('Include superseded values. Default false.'),
    as_of: z.string().max(40).optional().describe('ISO instant, e.g. 2026-11-30T12:00:00Z: the values valid at that time.'),
    scope: scopeField.optional(),
  }),
  run: (input, services) => services.memory.retrieve(input),
});
