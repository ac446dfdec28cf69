import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const list = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), total: z.number() });
const output = z.object({
  ok: z.literal(true),
  query: z.string().optional(),
  scope: z.string().optional(),
  limit: z.number(),
  memories: list(z.object({ id: z.string(), kind: z.string(), scope: z.string(), at: z.string(), label: z.string(), chunk: z.number().optional() })),
  entities: list(z.object({ name: z.string(), facts: z.number(), current_facts: z.number(), last_recorded_at: z.string() })),
  topics: list(z.object({ topic: z.string(), kind: z.enum(['tag', 'folder']), count: z.number() })),
  facts: list(
    z.object({
      subject: z.string(),
      predicate: z.string(),
      scope: z.string(),
      values: z.array(
        z.object({ id: z.string(), object: z.string(), status: z.enum(['current', 'historical']), valid_from: z.string(), valid_to: z.string().nullable(), recorded_at: z.string(), source: z.string() }),
      ),
      more_history: z.literal(true).optional(),
    }),
  ),
  retired: list(z.object({ id: z.string(), kind: z.string(), scope: z.string(), retired_at: z.string(), label: z.string() })),
});

export const memoryMapTool = defineTool({
  name: 'memory_map',
  displayName: 'Memory map',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Read-only overview for browsing, not for answering questions (get_context answers): every memory (note:/entry: ids), the entities facts are about, topics (tags and folders), facts with their full history (valid_from, valid_to, recorded_at), and retired memories. `query` keeps only what holds its words, to find a memory\'s id without loading the whole map; `scope` works with `query` only. Each list has `items` and `total`.',
  input: z.strictObject({
    query: z.string().min(1).max(500).optional().describe('Words the memory contains.'),
    scope: z.string().max(110).optional().describe('With query only: "global" or "project:<slug>".'),
    limit: z.number().int().min(1).max(200).optional().describe('Items per list. Default 20, or 10 with a query.'),
  }),
  run: (input, services) => services.recall.memoryMap(input),
});
