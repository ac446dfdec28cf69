import { z } from 'zod';
import { isRefusal, refuse } from '../refusal';
import type { CallExpand } from '../lcm/expandQuery';
import { inputJsonSchema } from './jsonSchema';
import { lcmExpandTool } from './lcmExpand';
import { allConversationsField, conversationIdField } from './lcmFields';
import { defineTool } from './toolDefinition';

export const DEFAULT_EXPAND_ANSWER_TOKENS = 2000;

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  answer: z.string(),
  citedIds: z.array(z.string()),
  citedMessageIds: z.array(z.number()).optional(),
  sourceConversationIds: z.array(z.number()),
  expandedSummaryCount: z.number(),
  totalSourceTokens: z.number(),
  truncated: z.boolean(),
  truncatedBecause: z.array(z.string()).optional(),
  synthesizedBy: z.string().nullable(),
  conversationBreakdown: z
  .array(
    z.object({
      conversationId: z.number(),
      title: z.string().nullable(),
      status: z.string(),
      stoppedBy: z.string().optional(),
      error: z.string().optional(),
      expandedSummaryCount: z.number(),
      sourceTokens: z.number(),
    }),
  )
  .optional(),
  scope: z.object({ conversationId: z.number().nullable(), how: z.string() }),
});

export const lcmExpandQueryTool = defineTool({
  name: 'lcm_expand_query',
  displayName: 'Answer from compacted history',
  family: 'lcm',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  output,
  description:
    'Deep recall: answer a focused question (prompt) by expanding summaries of the lossless-context DAG down to the source messages. Give query or summaryIds (from lcm_grep or lcm_describe). ' +
    'With a language model (in VS Code, when recollect.lcm.useLanguageModel allows it) a bounded sub-agent that can only call lcm_expand walks the DAG and answers (120 s limit, token cap); otherwise the answer is the best-matching source excerpts, each with its summary and message id, and says that no model synthesised it. ' +
    'allConversations: true ranks conversations and expands only the top few, each in its own bounded run, and merges their answers (conversationBreakdown shows each; truncated: true when some were skipped or failed). ' +
    'Returns answer, citedIds (summary ids it rests on), citedMessageIds, sourceConversationIds, expandedSummaryCount, totalSourceTokens, truncated (with truncatedBecause), synthesizedBy (the model, or null), conversationBreakdown.',
  input: z.strictObject({
    prompt: z.string().min(1).max(4000).describe('The question to answer.'),
    query: z.string().min(1).max(500).optional().describe('Words to find the summaries to expand (when no summaryIds).'),
    summaryIds: z.array(z.string().regex(/^sum_[0-9a-f]{16}$/, 'must be a summary id such as sum_0123456789abcdef')).min(1).max(20).optional().describe('Specific summaries to expand (when no query).'),
    maxTokens: z.number().int().min(50).max(16000).optional().describe(`Answer length cap in tokens. Default ${DEFAULT_EXPAND_ANSWER_TOKENS}.`),
    conversationId: conversationIdField.optional(),
    allConversations: allConversationsField.optional().describe('true: search across all conversations, expanding only the best few. Default false.'),
  }),
  run: async (input, services, ctx) => {
    const scope = services.lcm.scope({ client: ctx.client, workspace: ctx.workspace }, input);
    if (isRefusal(scope)) return scope;
    // The sub-agent's calls go through the lcm_expand tool itself, with the grant only this loop holds.
    const callExpand: CallExpand = async (raw, grant) => {
      const parsed = lcmExpandTool.input.safeParse(raw ?? {});
      if (!parsed.success) return refuse(`lcm_expand: invalid input: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ')}`);
      return lcmExpandTool.run(parsed.data, services, { ...ctx, expandGrant: grant });
    };
    const tool = { name: lcmExpandTool.name, description: lcmExpandTool.description, inputSchema: inputJsonSchema(lcmExpandTool) };
    return services.lcm.expandQuery(
      { prompt: input.prompt, query: input.query, summaryIds: input.summaryIds, maxTokens: input.maxTokens ?? DEFAULT_EXPAND_ANSWER_TOKENS },
      scope,
      callExpand,
      tool,
    );
  },
});
