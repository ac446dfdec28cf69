import { z } from 'zod';
import { defineTool } from './toolDefinition';

const text = (max: number) => z.string().min(1).max(max);

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({ ok: z.literal(true), recorded: z.literal(true), hash: z.string(), new: z.boolean(), times_recorded: z.number(), recorded_at: z.string(), scope: z.string(), note: z.string().optional() }),
  z.object({ ok: z.literal(true), recorded: z.literal(false), stored: z.literal(false), outcome: z.enum(['failed', 'abandoned']), note: z.string() }),
]);

export const writeErrorTool = defineTool({
  name: 'write_error',
  displayName: 'Record a resolved error',
  family: 'errors',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Store a tool failure together with the fix that resolved it, so a later error_history search finds it; returns `recorded` and the record\'s 8-character hash. Call it once a non-trivial fix is confirmed working, and when a failed tool result\'s `next:` hint asks for it. Only outcome=resolved is stored; failed and abandoned are accepted and discarded (recorded: false). The hash comes from tool_name + symptom + action, so recording the same fix again updates the one record (new keywords merged, a newer cause kept, times_recorded counted) instead of adding a duplicate. Control characters (other than tab and newlines) are refused.',
  input: z.strictObject({
    tool_name: text(100).describe('The tool that failed, exactly as it is called (e.g. "read_file").'),
    keywords: z.array(text(60)).min(1).max(20).describe('Words a later search would use: error codes, library names, the failing operation.'),
    symptom: text(4000).describe('What went wrong as observed: the error message or behaviour, verbatim where possible.'),
    cause: text(4000).optional().describe('Why it failed, once understood.'),
    action: text(4000).describe('The fix: what to do differently so the call succeeds. This is what a later search returns.'),
    outcome: z.enum(['resolved', 'failed', 'abandoned']).describe('resolved is stored; failed and abandoned are accepted but not stored.'),
  }),
  run: (input, services, ctx) => services.errors.write(input, ctx.client),
});
