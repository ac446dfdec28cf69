import { z } from 'zod';
import { scopeField } from './commonFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({ ok: z.literal(true), semantic: z.literal(false), reason: z.string(), hits: z.array(z.never()), hint: z.string() }),
  z.object({
    ok: z.literal(true),
    semantic: z.literal(true),
    model: z.string(),
    query: z.string(),
    hits: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(['entry', 'note', 'fact']),
        text: z.string(),
        scope: z.string(),
        created_at: z.string(),
        similarity: z.number().optional(),
        chunk: z.number().optional(),
        path: z.string().optional(),
        status: z.enum(['current', 'historical']).optional(),
      }),
    ),
    not_embedded: z.number().optional(),
    note: z.string().optional(),
    embedding_error: z.string().optional(),
  }),
]);

export const searchMemoryTool = defineTool({
  name: 'search_memory',
  displayName: 'Search memory by meaning',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  output,
  description:
    'Search notes (day-log entries, note chunks) and fact values by meaning. Uses the embedding model bundled with Recollect (nothing is downloaded), or an OpenAI-compatible /v1/embeddings endpoint such as a local Ollama where RECOLLECT_EMBEDDINGS_URL and RECOLLECT_EMBEDDINGS_MODEL name one. Memories are indexed in the background as they are written; memory_status says how far. Where semantic search is off (memory_status reports `semantic: false`) it returns no hits and says why, and search_text is the tool to use. Hits come best first: closeness in meaning ranked together with the query\'s keyword matches; `similarity` (cosine) is given where the meaning search found the hit.',
  input: z.strictObject({
    query: z.string().min(1).max(500).describe('Natural-language query (1 to 500 characters).'),
    top_k: z.number().int().min(1).max(50).optional().describe('Max matches, 1 to 50. Default 20.'),
    scope: scopeField.optional(),
    include_history: z.boolean().optional().describe('Also return superseded fact values (labelled historical). Default false.'),
  }),
  run: (input, services) => services.recall.searchMemory(input),
});
