import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const undoImportTool = defineTool({
  name: 'undo_import',
  displayName: 'Undo a Markdown import',
  family: 'memory',
  effects: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  description:
    'Retire the notes one import batch created (restorable with restore_memory), and nothing else: files that were there before the import are never touched, and a note edited since the import is kept and reported.',
  input: z.strictObject({
    batchId: z.string().uuid().describe('The batchId preview_import returned for the applied import.'),
  }),
  confirm: (input) => ({ title: 'Undo this import?', message: `The notes import batch ${input.batchId} created leave the vault (restore_memory brings one back).` }),
  run: (input, services) => services.transfer.undo(input.batchId),
});
