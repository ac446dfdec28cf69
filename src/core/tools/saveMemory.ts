import { z } from 'zod';
import { STATEMENT_MAX } from '../memory/memoryService';
import { citesField, scopeField, sourceField } from './commonFields';
import { savedFact } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = savedFact;

export const saveMemoryTool = defineTool({
  name: 'save_memory',
  displayName: 'Save memory (fact)',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'The structured form alone: save one fact as subject, predicate and object (all three required). No sentence is kept. Saving the same subject+predicate+scope again replaces the current value; the old one stays in history (retrieve_memory with include_history).',
  input: z.strictObject({
    subject: z.string().min(1).max(500).describe('What the fact is about.'),
    predicate: z.string().min(1).max(200).describe('The property, e.g. "uses", "rule", "owner".'),
    object: z.string().min(1).max(STATEMENT_MAX).describe('The current value.'),
    source: sourceField.optional(),
    scope: scopeField.optional(),
    cites: citesField.optional(),
  }),
  confirm: (input) => ({ title: 'Save this fact?', message: `${input.subject} · ${input.predicate} → ${input.object}` }),
  run: (input, services, ctx) => services.memory.saveFact(input, ctx.client),
});
