import { z } from 'zod';
import { IMPORT_FILE_MAX_BYTES } from '../transfer/importCheck';
import { defineTool } from './toolDefinition';

/** What a preview reports, staged (with a batch to apply) or not (with the reason in `note`). */
const preview = z.object({
  label: z.string(),
  folder: z.string(),
  files: z.number(),
  bytes: z.number(),
  would_create: z.array(z.string()),
  conflicts: z.array(z.object({
    index: z.number(),
    path: z.string(),
    reason: z.string(),
  })),
  unchanged: z.array(z.string()),
  excluded: z.array(z.string()),
  dates_clamped: z.array(z.object({
    index: z.number(),
    path: z.string(),
    claimed: z.string(),
    clamped_to: z.string(),
  })),
  creates: z.literal('notes'),
  ok: z.literal(true),
});

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  preview.extend({ note: z.string(), staged: z.literal(false) }),
  preview.extend({ staged: z.literal(true), batchId: z.string(), expires_at: z.string() }),
]);

export const previewImportTool = defineTool({
  name: 'preview_import',
  displayName: 'Preview a Markdown import',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Dry run of an import of Markdown notes into the vault under Imported/<label>/. The server cannot read the disk: read each .md file and send its text. Up to 100 files per call, 64 KiB per file, 128 KiB per batch; more is refused with the measured sizes. One bad file (not valid Unicode, or a control character other than tab, newline and carriage return, or U+007F) refuses the whole call and names its index in `files`; nothing is staged. A front-matter `session_date` or `date` later than the write time is replaced by the write time and reported. Writes no note: returns what would be created, conflicts (a different file already at the path, which is kept), and a batchId for apply_import (valid 15 minutes).',
  input: z.strictObject({
    label: z.string().min(1).max(200).describe('The folder the notes go to: Imported/<label>/ (no slashes).'),
    files: z
      .array(
        z.strictObject({
          relativePath: z.string().min(1).max(500).describe('The file\'s path relative to the folder being imported, forward slashes, ending in .md.'),
          markdown: z.string().max(IMPORT_FILE_MAX_BYTES * 4).describe('The file\'s full text (at most 64 KiB in UTF-8).'),
        }),
      )
      .min(1)
      .max(10_000)
      .describe('The .md files to import.'),
    include: z.array(z.string().min(1).max(500)).max(100).optional().describe('Only import files under these path prefixes (folders or files).'),
    exclude: z.array(z.string().min(1).max(500)).max(100).optional().describe('Leave out files under these path prefixes.'),
    stage: z.boolean().optional().describe('false: check only, nothing is held and no batchId is returned. Default true.'),
  }),
  run: (input, services, ctx) => services.transfer.preview(input, ctx.client),
});
