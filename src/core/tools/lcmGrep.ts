import { z } from 'zod';
import { isRefusal, refuse } from '../refusal';
import { parseInstant } from '../text/time';
import { allConversationsField, conversationIdField } from './lcmFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  conversation: z.object({
    conversationId: z.number().nullable(),
    how: z.string(),
  }),
  stopped: z.object({
    reason: z.string(),
    afterMs: z.number(),
    timeBoundMs: z.number(),
  }).optional(),
  scan: z.record(z.string(), z.object({
    prefilter: z.enum(['substring', 'fts', 'vocabulary', 'grams', 'none']),
    candidates: z.number(),
    scanned: z.number(),
    bytesScanned: z.number(),
    blobsRead: z.number(),
  })).optional(),
  ok: z.literal(true),
  matches: z.array(z.object({
    id: z.union([z.string(), z.number()]),
    type: z.enum(['message', 'summary']),
    snippet: z.string(),
    conversationId: z.number(),
    createdAt: z.string(),
    role: z.string().optional(),
    toolName: z.string().nullable().optional(),
    coveredBy: z.string().nullable().optional(),
    depth: z.number().optional(),
    kind: z.string().optional(),
    summaryId: z.string().optional(),
    matched: z.enum(['all', 'partial']).optional(),
  })),
  count: z.number(),
  truncated: z.boolean(),
});

export const lcmGrepTool = defineTool({
  name: 'lcm_grep',
  displayName: 'Search compacted history',
  family: 'lcm',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Search imported conversations (their messages and the summaries of the lossless-context DAG) by regex or full text. Start recall here; then lcm_describe a summary, then lcm_expand_query for detail the summaries dropped. ' +
    'regex (default): an RE2 regular expression in JavaScript syntax, run in linear time (lookaround and backreferences are refused by name), case-sensitive (/pattern/i for any case, also /m and /s); in a text over 256 K characters a match longer than 8,192 characters can come back shortened. A scan stops after 20 s and says so in stopped; other calls are answered meanwhile. ' +
    'full_text: words and "quoted phrases" in any form (case, accents, English endings; CJK words inside sentences), BM25: matches of every word first, then, when fewer than limit, the best of some words (matched: all|partial); regex syntax is refused. ' +
    'A conversation is one imported session; default: the current one (the newest of your kind in your workspace; the answer says which). ' +
    'Returns matches with id (a number for a message, sum_… for a summary), type, snippet (match in [brackets]), conversationId, createdAt; messages add role, toolName and coveredBy (the leaf summary holding them); summaries add depth, kind, summaryId. truncated: true when more matched than were returned.',
  input: z.strictObject({
    pattern: z.string().min(1).max(500).describe('What to find: a regular expression (mode regex) or words and "quoted phrases" (mode full_text).'),
    mode: z.enum(['regex', 'full_text']).optional().describe('Default regex.'),
    scope: z.enum(['messages', 'summaries', 'both']).optional().describe('Default both.'),
    conversationId: conversationIdField.optional(),
    allConversations: allConversationsField.optional(),
    since: z.string().max(40).optional().describe('ISO instant, inclusive (e.g. 2026-02-19T00:00:00Z).'),
    before: z.string().max(40).optional().describe('ISO instant, exclusive.'),
    limit: z.number().int().min(1).max(200).optional().describe('Default 50.'),
    sort: z.enum(['recency', 'relevance', 'hybrid']).optional().describe('Default recency; hybrid is relevance decayed by age; in regex mode relevance counts the matches in each item.'),
  }),
  run: async (input, services, ctx) => {
    const since = input.since === undefined ? undefined : parseInstant(input.since);
    const before = input.before === undefined ? undefined : parseInstant(input.before);
    if (input.since !== undefined && since === undefined) return refuse(`since "${input.since}" is not an ISO timestamp such as 2026-02-19T00:00:00Z`);
    if (input.before !== undefined && before === undefined) return refuse(`before "${input.before}" is not an ISO timestamp such as 2026-02-19T00:00:00Z`);
    const scope = services.lcm.scope({ client: ctx.client, workspace: ctx.workspace }, input);
    if (isRefusal(scope)) return scope;
    const found = await services.lcm.grep({ pattern: input.pattern, mode: input.mode ?? 'regex', scope: input.scope ?? 'both', since, before, limit: input.limit ?? 50, sort: input.sort ?? 'recency' }, scope);
    if (isRefusal(found)) return found;
    return { ...found, conversation: { conversationId: scope.all ? null : scope.conversationId, how: scope.how } };
  },
});
