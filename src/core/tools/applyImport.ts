import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  batchId: z.string(),
  applied_at: z.string(),
  created: z.array(z.string()),
  conflicts: z.array(z.object({
    path: z.string(),
    reason: z.string(),
  })),
  unchanged: z.array(z.string()),
  indexed: z.object({
    files: z.number(),
    chunks: z.number(),
    skipped: z.array(z.object({
      path: z.string(),
      reason: z.string(),
    })),
  }),
  dates_clamped: z.array(z.object({
    path: z.string(),
    claimed: z.string(),
    clamped_to: z.string(),
  })),
  creates: z.literal('notes'),
});

export const applyImportTool = defineTool({
  name: 'apply_import',
  displayName: 'Apply a Markdown import',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Apply an import previewed by preview_import, within 15 minutes of the preview (an older one is refused with its age). Additive: writes each new note under Imported/<label>/ and indexes it so search and get_context find it; a different file already at a path is kept and reported as a conflict. Creates notes, not facts. undo_import takes the batch back.',
  input: z.strictObject({
    batchId: z.string().uuid().describe('The batchId preview_import returned.'),
  }),
  confirm: (input) => ({ title: 'Import these notes?', message: `Import batch ${input.batchId} writes new notes under Imported/ in the memory vault.` }),
  run: (input, services) => services.transfer.apply(input.batchId),
});
