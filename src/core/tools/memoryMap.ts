import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const memoryMapTool = defineTool({
  name: 'memory_map',
  displayName: 'Memory map',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  description:
    'Read-only overview for browsing, not for answering questions (get_context answers): every memory (note:/entry: ids), the entities facts are about, topics (tags and folders), facts with their full history (valid_from, valid_to, recorded_at), and retired memories. `query` keeps only what holds its words, to find a memory\'s id without loading the whole map; `scope` works with `query` only. Each list has `items` and `total`.',
  input: z.strictObject({
    query: z.string().min(1).max(500).optional().describe('Words the memory contains.'),
    scope: z.string().max(110).optional().describe('With query only: "global" or "project:<slug>".'),
    limit: z.number().int().min(1).max(200).optional().describe('Items per list. Default 20, or 10 with a query.'),
  }),
  run: (input, services) => services.recall.memoryMap(input),
});
