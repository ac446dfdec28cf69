import { z } from 'zod';
import { SECTIONS } from '../transfer/exportFormat';
import { defineTool } from './toolDefinition';

export const exportMemoryTool = defineTool({
  name: 'export_memory',
  displayName: 'Export memory',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  description:
    'Everything this memory holds as portable Markdown (format renor-export/v1): the fact ledger exactly as stored (superseded values included, with recorded and valid times, scope and source), every daily-log entry, every note in full, and everything retired. The reply is a JSON manifest (counts per kind, paging state) followed by `document`. Over about 8,000 tokens it is paged, never cut: call again with `section` = the manifest\'s `nextSection` and `offset` = its `nextItem` while `nextSection` is set; the pages concatenated are the whole document. Search indexes and embeddings are not exported (they are rebuilt from the Markdown).',
  input: z.strictObject({
    section: z.enum(SECTIONS).optional().describe('Where this page starts: ledger, daily-entries, notes or retired. Pass the previous reply\'s nextSection. Default ledger (the start).'),
    offset: z.number().int().min(0).optional().describe('The item within `section` this page starts at: the previous reply\'s nextItem. Default 0.'),
  }),
  run: (input, services) => services.transfer.exportMemory(input),
});
