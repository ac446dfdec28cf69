import { z } from 'zod';
import { SEARCH_CAP, SEARCH_DEFAULT, WRITE_REMOVED } from '../errors/errorService';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const record = z.object({
  hash: z.string(),
  tool_name: z.string(),
  keywords: z.array(z.string()),
  symptom: z.string(),
  cause: z.string().nullable(),
  action: z.string(),
  outcome: z.literal('resolved'),
  source: z.string(),
  scope: z.string(),
  first_recorded_at: z.string(),
  last_recorded_at: z.string(),
  times_recorded: z.number(),
});
const output = z.union([
  z.object({
    ok: z.literal(true),
    mode: z.literal('search'),
    door: z.string(),
    query: z.string(),
    limit: z.number(),
    records: z.array(record.extend({ snippet: z.string(), score: z.number() })),
    total: z.number(),
    shown: z.number(),
    tokens: z.number(),
    note: z.string().optional(),
  }),
  z.object({ ok: z.literal(true), mode: z.literal('read'), door: z.string(), record }),
]);

export const errorHistoryTool = defineTool({
  name: 'error_history',
  displayName: 'Error history',
  family: 'errors',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    `Tool failures kept across sessions, each with the fix that worked. Look here before debugging a failing tool call. mode=search finds past records by keyword (tool name, keywords, symptom, cause, fix; every word must match) and returns ${SEARCH_DEFAULT} by default; limit is capped at ${SEARCH_CAP} (a larger limit is lowered and the reply says so). mode=read fetches one record by its 8-character hash, e.g. when a tool result says \`no data: {hash}\`. Leave mode out to infer it: hash → read, otherwise search. mode=write was removed: record fixes with write_error. \`door\`: where the answer came from.`,
  input: z.strictObject(
    {
      mode: z.enum(['search', 'read', 'write']).optional().describe('search (keywords) or read (one record by hash). Inferred when omitted. write was removed: use write_error.'),
      query: z.string().min(1).max(200).optional().describe('mode=search: keywords such as the tool name and words from the error message.'),
      limit: z.number().int().min(1).optional().describe(`mode=search: records to return, default ${SEARCH_DEFAULT}, capped at ${SEARCH_CAP}.`),
      hash: z
        .string()
        .regex(/^\s*(no data:\s*)?[0-9a-fA-F]{8}\s*$/, 'must be an 8-character hex id (a whole "no data: {hash}" line is also accepted)')
        .optional()
        .describe('mode=read: the 8-character record id, as returned by search or write_error or named in `no data: {hash}`.'),
    },
    {
      // An agent still using the removed mode sends write_error's fields along; name the replacement
      // instead of listing unknown keys.
      error: (issue) => (issue.code === 'unrecognized_keys' && (issue.input as { mode?: unknown } | undefined)?.mode === 'write' ? WRITE_REMOVED : undefined),
    },
  ),
  run: (input, services) => services.errors.history(input),
});
