import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({ ok: z.literal(true), restored: z.string(), kind: z.literal('fact'), status: z.enum(['current', 'historical']), note: z.string().optional() }),
  z.object({ ok: z.literal(true), restored: z.string(), kind: z.string(), path: z.string(), note: z.string().optional() }),
]);

export const restoreMemoryTool = defineTool({
  name: 'restore_memory',
  displayName: 'Restore a memory',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Put a retired memory back exactly as it was. It refuses to overwrite a file that now occupies the same path (move or rename that file first). A fact superseded while it was retired comes back as history.',
  input: z.strictObject({
    id: z.string().min(1).max(700).describe('The id of the retired memory (memory_map lists them under `retired`).'),
  }),
  confirm: (input) => ({ title: 'Restore this memory?', message: `${input.id} will return to recall.` }),
  run: (input, services) => services.recall.restore(input.id),
});
