import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const searchHistoryTool = defineTool({
  name: 'search_history',
  displayName: 'Search promoted history',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  description:
    'Owner-only: deterministic lexical (BM25) search over the chat-history notes the owner promoted into the vault\'s history/ folder, returned as citations with provenance (note id, file, lines, excerpt, source, date). No semantic search. Where no promoted-history folder exists it returns no results and `configured: false` with the reason. For imported chat transcripts use chat_history.',
  input: z.strictObject({
    query: z.string().min(1).max(200).describe('Lexical search terms.'),
    limit: z.number().int().min(1).max(20).optional().describe('Max results. Default 5.'),
  }),
  run: (input, services) => services.recall.searchHistory(input),
});
