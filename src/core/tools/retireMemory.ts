import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({ ok: z.literal(true), retired: z.string(), kind: z.literal('fact'), subject: z.string(), predicate: z.string(), object: z.string(), scope: z.string() }),
  z.object({ ok: z.literal(true), retired: z.string(), kind: z.string(), path: z.string(), removed_from_file: z.boolean().optional(), file_removed: z.literal(true).optional(), note: z.string().optional() }),
]);

export const retireMemoryTool = defineTool({
  name: 'retire_memory',
  displayName: 'Retire a memory',
  family: 'memory',
  effects: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  output,
  description:
    'Take one memory out of recall without deleting it. Use only when the owner asks to forget something. A fact leaves recall but stays in the ledger; an entry\'s block leaves its day log; a note\'s file leaves the vault. The text stays in the store and restore_memory puts it back exactly.',
  input: z.strictObject({
    id: z.string().min(1).max(700).describe('A memory id: note:<path>, entry:<path>#<hash> or fact:<id>.'),
  }),
  confirm: (input) => ({ title: 'Retire this memory?', message: `${input.id} will leave recall (restore_memory brings it back).` }),
  run: (input, services) => services.recall.retire(input.id),
});
