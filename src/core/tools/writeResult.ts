import { z } from 'zod';
import { RESULT_MAX_BYTES } from '../results/resultWriter';
import { binarySize, MAX_REQUEST_BYTES } from './requestLimit';
import { defineTool } from './toolDefinition';

/** The receipt, or a refused page: the shared refusal shape plus every problem found (`problems`). */
const output = z.union([
  z.object({
    ok: z.literal(true),
    path: z.string(),
    bytes: z.number(),
    format: z.enum(['md', 'html']),
    folder: z.enum(['configured', 'downloads', 'fallback']),
  }),
  z.object({
    problems: z.array(z.string()).optional(),
    incomplete_document: z.boolean().optional(),
    ok: z.literal(false),
    reason: z.string(),
    budget: z.object({
      limit: z.number(),
      used: z.number(),
      unit: z.enum(['requests', 'characters', 'tokens', 'items', 'bytes']),
    }).optional(),
  }),
]);

export const writeResultTool = defineTool({
  name: 'write_result',
  displayName: 'Write result file',
  family: 'history',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Save one long-form deliverable (the research, analysis or comparison your reply summarises instead of reprinting, or a finished HTML page) as a new file report-YYYYMMDD-HHMMSS.md or .html (local time; -2, -3… when the name is taken, never overwriting); returns the receipt {path, bytes, format}. Folder: the recollect.outputDirectory setting, else ~/Downloads when it exists, else a results folder in Recollect\'s storage. format=html is checked before anything is written: a complete document (<html>…</html> with a <body>), every inline <script> parses, no markup written from script (document.write, innerHTML/outerHTML assignment, insertAdjacentHTML), no {{ }} template expressions. A failing page is not written; the refusal lists every problem (plus the html_render rules when the document structure is missing): fix them all and call again. To change an existing file, use a file-editing tool.',
  input: z.strictObject({
    content: z
      .string()
      .min(1)
      .describe(`The complete file content: up to ${binarySize(RESULT_MAX_BYTES)} of UTF-8. Over MCP the whole request, as JSON, may be at most ${binarySize(MAX_REQUEST_BYTES)} (escaped newlines and quotes count twice, other control characters six times); a larger request is refused with its size.`),
    format: z.enum(['md', 'html']).optional().describe('md (default) or html.'),
  }),
  run: async (input, services) => {
    const receipt = await services.results.write(input);
    if (receipt.ok || !receipt.incomplete_document) return receipt;
    const rules = services.guides.get(['html_render']);
    return rules.ok ? { ...receipt, reason: `${receipt.reason}\n\n${rules.guide}` } : receipt;
  },
});
