import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  expansions: z.array(
    z.object({
      summaryId: z.string(),
      depth: z.number(),
      kind: z.string(),
      conversationId: z.number(),
      children: z.array(z.object({ summaryId: z.string(), depth: z.number(), kind: z.string(), earliestAt: z.number().nullable(), latestAt: z.number().nullable(), tokens: z.number(), content: z.string() })),
      messages: z.array(z.object({ id: z.number(), role: z.string(), toolName: z.string().nullable(), createdAt: z.string().nullable(), text: z.string(), fileId: z.string().nullable(), tokens: z.number() })),
      note: z.string().optional(),
    }),
  ),
  citedIds: z.array(z.string()),
  totalTokens: z.number(),
  remainingTokens: z.number(),
  truncated: z.boolean(),
  withheld: z.array(z.object({ id: z.union([z.string(), z.number()]), type: z.enum(['summary', 'message']), tokens: z.number(), fileId: z.string().nullable().optional() })).optional(),
  withheldReason: z.string().optional(),
});

export const lcmExpandTool = defineTool({
  name: 'lcm_expand',
  displayName: 'Expand summaries (sub-agent only)',
  family: 'lcm',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Low-level DAG expansion, ONLY for the sub-agent that lcm_expand_query starts: it holds a short-lived grant scoped to the conversations being expanded, and any other caller is refused with "use lcm_expand_query". ' +
    'Reads each summary one level down: a condensed summary\'s children, or a leaf\'s source messages verbatim. Items are returned whole or withheld (listed with their token counts), never cut; the grant\'s token budget bounds the run.',
  input: z.strictObject({
    summaryIds: z.array(z.string().regex(/^sum_[0-9a-f]{16}$/, 'must be a summary id such as sum_0123456789abcdef')).min(1).max(8).describe('Summaries to expand one level.'),
    includeMessages: z.boolean().optional().describe('Return a leaf\'s source messages. Default true.'),
    tokenCap: z.number().int().min(1).optional().describe('At most this many tokens from this call (never more than the grant has left).'),
  }),
  run: (input, services, ctx) => services.lcm.expand(ctx.expandGrant, { summaryIds: input.summaryIds, includeMessages: input.includeMessages ?? true, tokenCap: input.tokenCap }),
});
