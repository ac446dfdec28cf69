import { z } from 'zod';
import { isRefusal } from '../refusal';
import { allConversationsField, conversationIdField } from './lcmFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({
    ok: z.literal(true),
    type: z.literal('summary'),
    id: z.string(),
    conversationId: z.number(),
    content: z.string(),
    depth: z.number(),
    kind: z.string(),
    tokenCount: z.number(),
    createdAt: z.string(),
    earliestAt: z.string().nullable(),
    latestAt: z.string().nullable(),
    descendantCount: z.number(),
    messageCount: z.number(),
    parentIds: z.array(z.string()),
    childIds: z.array(z.string()),
    sourceMessageIds: z.array(z.number()),
    fileIds: z.array(z.string()),
    producer: z.string(),
  }),
  z.object({
    ok: z.literal(true),
    type: z.literal('file'),
    id: z.string(),
    conversationId: z.number(),
    content: z.string(),
    fileName: z.string(),
    mimeType: z.string(),
    byteSize: z.number(),
    tokenCount: z.number(),
    explorationSummary: z.string(),
    storagePath: z.string(),
    storageEncoding: z.string(),
    createdAt: z.string(),
    sourceMessageId: z.number(),
    citedBy: z.array(z.string()),
  }),
]);

export const lcmDescribeTool = defineTool({
  name: 'lcm_describe',
  displayName: 'Describe a summary or stored file',
  family: 'lcm',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Inspect one item of the lossless-context DAG by id; cheap, no sub-agent. A summary (sum_…): its full content (ending with "Expand for details about:" naming what it dropped), depth, kind (leaf|condensed), tokenCount, createdAt, earliestAt/latestAt, descendantCount, messageCount, parentIds (one level up), childIds (one level down), sourceMessageIds (a leaf\'s messages), fileIds and producer (extractive or the model). ' +
    'A stored file (file_…, a large output kept once): its full content, fileName, mimeType, byteSize, tokenCount, explorationSummary, storagePath and storageEncoding (brotli: read content, not the file). ' +
    'An id from another conversation than the current one (or conversationId) is refused with the conversation it belongs to, unless allConversations is true.',
  input: z.strictObject({
    id: z.string().min(1).max(100).describe('sum_xxx for a summary, file_xxx for a stored file.'),
    conversationId: conversationIdField.optional(),
    allConversations: allConversationsField.optional().describe('true: allow an id from any conversation. Default false.'),
  }),
  run: (input, services, ctx) => {
    const scope = services.lcm.scope({ client: ctx.client, workspace: ctx.workspace }, input);
    if (isRefusal(scope)) return scope;
    return services.lcm.describe(input.id, scope);
  },
});
