import { z } from 'zod';
import { indexState } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({
    ok: z.literal(true),
    configured: z.boolean(),
    reason: z.string(),
    results: z.array(z.never()),
  }),
  z.object({
    ok: z.literal(true),
    configured: z.boolean(),
    folders: z.array(z.string()),
    query: z.string(),
    match: z.enum(['any', 'all']),
    results: z.array(z.object({
      id: z.string(),
      title: z.string(),
      path: z.string(),
      scope: z.string(),
      chunk: z.number(),
      lines: z.object({
        from: z.number(),
        to: z.number(),
      }),
      excerpt: z.string(),
      score: z.number(),
      provenance: z.object({
        file: z.string(),
        source: z.string().nullable(),
        date: z.string().nullable(),
        modified_at: z.string(),
        indexed_at: z.string(),
      }),
    })),
    total: z.number(),
    index: indexState,
  }),
]);

export const searchHistoryTool = defineTool({
  name: 'search_history',
  displayName: 'Search promoted history',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Owner-only: deterministic lexical (BM25) search over the chat-history notes the owner promoted into the vault\'s history/ folder, returned as citations with provenance (note id, file, lines, excerpt, source, date). No semantic search. Where no promoted-history folder exists it returns no results and `configured: false` with the reason. For imported chat transcripts use chat_history.',
  input: z.strictObject({
    query: z.string().min(1).max(200).describe('Lexical search terms.'),
    limit: z.number().int().min(1).max(20).optional().describe('Max results. Default 5.'),
  }),
  run: (input, services) => services.recall.searchHistory(input),
});
