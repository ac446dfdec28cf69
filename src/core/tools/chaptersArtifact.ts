import { z } from 'zod';
import { PACK_DEFAULT_TOKENS, READ_DEFAULT_LINES, READ_MAX_LINES } from '../chapters/artifact';
import { refuse } from '../refusal';
import { tokenBudget } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({
    next: z.string().optional(),
    ok: z.literal(true),
    action: z.literal('toc'),
    ref: z.string(),
    sha256: z.string(),
    path: z.string(),
    of: z.number(),
    headings: z.array(z.object({
      line: z.number(),
      level: z.number(),
      text: z.string(),
    })),
    total: z.number(),
    shown: z.number(),
    truncated: z.boolean(),
    remaining: z.number(),
    budget: tokenBudget,
  }),
  z.object({
    next: z.string().optional(),
    ok: z.literal(true),
    action: z.literal('search'),
    ref: z.string(),
    sha256: z.string(),
    query: z.string(),
    of: z.number(),
    blocks: z.array(z.object({
      startLine: z.number(),
      endLine: z.number(),
      matches: z.number(),
      text: z.string(),
      clipped: z.boolean(),
    })),
    totalMatches: z.number(),
    truncated: z.boolean(),
    remainingMatches: z.number(),
    budget: tokenBudget,
  }),
  z.object({
    ok: z.literal(true),
    action: z.literal('read'),
    ref: z.string(),
    sha256: z.string(),
    start: z.number(),
    end: z.number(),
    of: z.number(),
    lines: z.array(z.string()),
    tokens: z.number(),
    next: z.number().nullable(),
  }),
]);

export const chaptersArtifactTool = defineTool({
  name: 'chapters_artifact',
  displayName: 'Chapters: open an archived artifact',
  family: 'chapters',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description: `Re-consult an archived chapter, plan or large stored output without swallowing it (after compaction, across windows). ref: a chapter id (ch_…), plan id (plan_…), child session id (rcs_…, its first message), sha256 or blob path from chapters_search, chapters_segment or a table of contents. action=toc: the heading map with 1-based line numbers (packed into a token budget, default ${PACK_DEFAULT_TOKENS}); action=search: the blocks around lines holding query (any case), with totalMatches, truncated and remainingMatches (same budget); action=read: a window of lines from start (1-based) — default ${READ_DEFAULT_LINES} lines, at most ${READ_MAX_LINES} — returning start, end, of (total lines), lines and next.`,
  input: z.strictObject({
    ref: z.string().min(1).max(1_000).describe('What to open: ch_…, plan_…, rcs_…, a sha256, or a blob path.'),
    action: z.enum(['toc', 'search', 'read']).optional().describe('toc (default), search or read.'),
    query: z.string().min(1).max(300).optional().describe('action=search: the text to find (any case).'),
    start: z.number().int().min(1).optional().describe('action=read: first line, 1-based (default 1).'),
    lines: z.number().int().min(1).max(READ_MAX_LINES).optional().describe(`action=read: how many lines (default ${READ_DEFAULT_LINES}, at most ${READ_MAX_LINES}).`),
    budget: z.number().int().min(50).max(8_000).optional().describe(`action=toc or search: token budget (default ${PACK_DEFAULT_TOKENS}).`),
  }),
  run: (input, services) => {
    const action = input.action ?? 'toc';
    if (action === 'search') {
      if (!input.query) return refuse('action=search needs a query');
      return services.chapters.artifact({ action, ref: input.ref, query: input.query, budget: input.budget });
    }
    if (action === 'read') return services.chapters.artifact({ action, ref: input.ref, start: input.start, lines: input.lines });
    return services.chapters.artifact({ action, ref: input.ref, budget: input.budget });
  },
});
