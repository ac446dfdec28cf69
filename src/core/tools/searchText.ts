import { z } from 'zod';
import { scopeField } from './commonFields';
import { indexState } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  query: z.string(),
  hits: z.array(z.object({
    text: z.string(),
    snippet: z.string(),
    scope: z.string(),
    created_at: z.string(),
    score: z.number(),
    matched: z.enum(['all', 'partial']),
    chunk: z.number().optional(),
    line: z.number().optional(),
    path: z.string().optional(),
    id: z.string(),
    kind: z.enum(['note', 'fact']),
  })),
  total: z.number(),
  shown: z.number(),
  index: indexState,
});

export const searchTextTool = defineTool({
  name: 'search_text',
  displayName: 'Search memory text',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Keyword (BM25 full-text) search over saved notes and current facts; makes no embedding call, and facts saved with remember are found at once. Words match in any form of the word (case, accents, English endings: "dependency" finds "dependencies"; Chinese, Japanese and Korean words are found inside sentences). Hits holding every word come first; when fewer than top_k do, the best hits holding some of the words fill up the list. "quoted words" match as a phrase; word* matches a prefix. Operators are treated as plain words. Returns hits best first with id, kind (fact or note: a day-log entry or a chunk of a Markdown note, with its path), snippet, scope, created_at, score and matched ("all": holds every word; "partial": some of them), total (hits holding every word), and `index.stale` when the vault changed since it was indexed (index_memory).',
  input: z.strictObject({
    query: z.string().min(1).max(200).describe('Keywords to find.'),
    top_k: z.number().int().min(1).max(50).optional().describe('Max hits. Default 20.'),
    scope: scopeField.optional(),
  }),
  run: (input, services) => services.memory.searchText(input),
});
