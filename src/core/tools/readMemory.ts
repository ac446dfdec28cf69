import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const readMemoryTool = defineTool({
  name: 'read_memory',
  displayName: 'Read a memory',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  description:
    'One memory in full, with its metadata and the facts extracted from it: `note:<path>` (a Markdown note; its text, title, aliases, tags, dates), `entry:<path>#<hash>` (one day-log entry), or `fact:<id>` (a fact with its whole history). Retired memories are readable too and say so. Ids come from memory_map, get_context and search_text.',
  input: z.strictObject({
    id: z.string().min(1).max(700).describe('A memory id: note:<path>, entry:<path>#<hash> or fact:<id>.'),
  }),
  run: (input, services) => services.recall.readMemory(input.id),
});
