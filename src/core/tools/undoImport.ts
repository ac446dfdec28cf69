import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  batchId: z.string(),
  undone_at: z.string(),
  retired: z.array(z.string()),
  kept: z.array(z.object({
    path: z.string(),
    reason: z.string(),
  })),
  note: z.string(),
});

export const undoImportTool = defineTool({
  name: 'undo_import',
  displayName: 'Undo a Markdown import',
  family: 'memory',
  effects: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  output,
  description:
    'Retire the notes one import batch created (restorable with restore_memory), and nothing else: files that were there before the import are never touched, and a note edited since the import is kept and reported.',
  input: z.strictObject({
    batchId: z.string().uuid().describe('The batchId preview_import returned for the applied import.'),
  }),
  confirm: (input) => ({ title: 'Undo this import?', message: `The notes import batch ${input.batchId} created leave the vault (restore_memory brings one back).` }),
  run: (input, services) => services.transfer.undo(input.batchId),
});
