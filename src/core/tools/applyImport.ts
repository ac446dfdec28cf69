import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const applyImportTool = defineTool({
  name: 'apply_import',
  displayName: 'Apply a Markdown import',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  description:
    'Apply an import previewed by preview_import, within 15 minutes of the preview (an older one is refused with its age). Additive: writes each new note under Imported/<label>/ and indexes it so search and get_context find it; a different file already at a path is kept and reported as a conflict. Creates notes, not facts. undo_import takes the batch back.',
  input: z.strictObject({
    batchId: z.string().uuid().describe('The batchId preview_import returned.'),
  }),
  confirm: (input) => ({ title: 'Import these notes?', message: `Import batch ${input.batchId} writes new notes under Imported/ in the memory vault.` }),
  run: (input, services) => services.transfer.apply(input.batchId),
});
