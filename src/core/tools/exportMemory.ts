import { z } from 'zod';
import { SECTIONS } from '../transfer/exportFormat';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  format: z.literal('renor-export/v1'),
  exported_at: z.string(),
  counts: z.object({
    facts: z.number(),
    current_facts: z.number(),
    superseded_facts: z.number(),
    daily_entries: z.number(),
    notes: z.number(),
    retired: z.object({
      facts: z.number(),
      entries: z.number(),
      notes: z.number(),
    }),
  }),
  page: z.object({
    section: z.enum(['ledger', 'daily-entries', 'notes', 'retired']),
    offset: z.number(),
    items: z.number(),
    tokens: z.number(),
    budget_tokens: z.number(),
    oversized_item: z.string().optional(),
  }),
  nextSection: z.enum(['ledger', 'daily-entries', 'notes', 'retired']).optional(),
  nextItem: z.number().optional(),
  complete: z.boolean(),
  document: z.string(),
});

export const exportMemoryTool = defineTool({
  name: 'export_memory',
  displayName: 'Export memory',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Everything this memory holds as portable Markdown (format renor-export/v1): the fact ledger exactly as stored (superseded values included, with recorded and valid times, scope and source), every daily-log entry, every note in full, and everything retired. The reply is a JSON manifest (counts per kind, paging state) followed by `document`. Over about 8,000 tokens it is paged, never cut: call again with `section` = the manifest\'s `nextSection` and `offset` = its `nextItem` while `nextSection` is set; the pages concatenated are the whole document. Search indexes and embeddings are not exported (they are rebuilt from the Markdown).',
  input: z.strictObject({
    section: z.enum(SECTIONS).optional().describe('Where this page starts: ledger, daily-entries, notes or retired. Pass the previous reply\'s nextSection. Default ledger (the start).'),
    offset: z.number().int().min(0).optional().describe('The item within `section` this page starts at: the previous reply\'s nextItem. Default 0.'),
  }),
  run: (input, services) => services.transfer.exportMemory(input),
});
