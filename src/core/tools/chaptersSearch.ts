import { z } from 'zod';
import { SEARCH_DEFAULT_BUDGET } from '../chapters/archiveSearch';
import { tokenBudget } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  door: z.string(),
  results: z.array(z.object({
    score: z.number(),
    date: z.string(),
    kind: z.enum(['chapter', 'plan']),
    title: z.string(),
    path: z.string(),
    topics: z.array(z.string()),
    id: z.string(),
  })),
  total: z.number(),
  shown: z.number(),
  budget: tokenBudget,
  note: z.string(),
  // The spec gives the packed answer on the store door; a pool mirror's answer carries it too.
  line: z.string().optional(),
});

export const chaptersSearchTool = defineTool({
  name: 'chapters_search',
  displayName: 'Chapters: search the archive',
  family: 'chapters',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description: `Search archived chapters and plans at the start of any domain ("has anyone hit this?"): ranked hits through the one BM25 scorer, packed best first into a token budget (default ${SEARCH_DEFAULT_BUDGET}; the budget counts the hits, the list and the packed line). Every word must match; when nothing holds them all, hits are ranked by the words they hold and the note says so. kind=plan finds plans (todo/plan tool calls) as plans. Returns results [{score, date, kind, title, path, topics, id}], total, shown, budget {requested, used, remaining}, note (which door answered — the pool mirror or this machine's store — and whether the list was trimmed) and line (the packed answer). Open a hit with chapters_artifact (ref = its id or path).`,
  input: z.strictObject({
    query: z.string().min(1).max(300).describe('Words to look for: error messages, library names, what the work was about.'),
    kind: z.enum(['chapter', 'plan']).optional().describe('Only chapters, or only plans. Default: both.'),
    budget: z.number().int().min(50).max(8_000).optional().describe(`Token budget for the hits (default ${SEARCH_DEFAULT_BUDGET}).`),
    sort: z.enum(['relevance', 'recency', 'hybrid']).optional().describe('relevance (default), recency, or hybrid (relevance decayed by age).'),
  }),
  run: (input, services) => services.chapters.search(input),
});
