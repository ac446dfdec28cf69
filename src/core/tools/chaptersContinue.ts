import { z } from 'zod';
import { isRefusal } from '../refusal';
import { defineTool } from './toolDefinition';
import { presetField, sessionIdField } from './chaptersSegment';

const NOTE_MAX = 40_000;

export const budgetTokensField = z
  .number()
  .int()
  .min(200)
  .max(32_000)
  .optional()
  .describe("Token budget for the next session's first message (table of contents + handoff note), overriding the preset's.");

export const handoffNoteField = z
  .string()
  .max(NOTE_MAX)
  .describe('State of play for the next session: what is in progress, decisions that hold, the next step. Counted in the budget with the table of contents, never cut.');

/** What continue and fork both answer: the child session opened, its marker, the preset and the budget spent. */
export const childSessionAnswer = z.object({
  session: z.object({
    id: z.string(),
    how: z.string(),
  }),
  opened: z.object({
    opened: z.boolean(),
    how: z.string(),
  }),
  ok: z.literal(true),
  childSessionId: z.string(),
  marker: z.string(),
  presetUsed: z.object({
    name: z.enum(['compact', 'standard', 'generous']),
    budgetTokens: z.number(),
    chapterTargetTokens: z.number(),
    budgetOverridden: z.boolean(),
  }),
  budget: z.object({
    requested: z.number(),
    used: z.number(),
    remaining: z.number(),
    toc: z.number(),
    note: z.number(),
  }),
  warnings: z.array(z.string()),
  firstMessage: z.string(),
});

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = childSessionAnswer.extend({
  intent: z.enum(['continue', 'fork']),
  chapters: z.array(z.object({
    id: z.string(),
    title: z.string(),
    summary: z.string(),
    startSeq: z.number(),
    endSeq: z.number(),
    sha256: z.string(),
    tokens: z.number(),
    path: z.string(),
    new: z.boolean(),
  })),
  toc: z.object({
    chapters: z.number(),
    tokens: z.number(),
  }),
});
export const chaptersContinueTool = defineTool({
  name: 'chapters_continue',
  displayName: 'Chapters: archive and continue',
  family: 'chapters',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Archive chosen ranges of this session as verbatim Markdown chapters (rendered from the stored events: you choose ranges, titles and summaries, never the text; each chapter gets sha256, start/end seq and a token count) and open a new session whose first message is the cumulative table of contents across the whole ancestry plus your handoff note. Ranges: ascending, non-overlapping, at or below archiveCeiling from chapters_segment; a range identical to an existing chapter cites it. If the table of contents and note do not fit the budget it refuses with the numbers instead of trimming, and nothing is written. Returns childSessionId, presetUsed, chapters, warnings[] (coverage gaps, over-target chapters), budget, firstMessage and opened (whether an editor opened the new session; elsewhere, start a new session with firstMessage).',
  input: z.strictObject({
    sessionId: sessionIdField,
    chapters: z
      .array(
        z.strictObject({
          startSeq: z.number().int().min(1).describe('First event seq, inclusive.'),
          endSeq: z.number().int().min(1).describe('Last event seq, inclusive (≤ archiveCeiling).'),
          title: z.string().min(1).max(200).describe('Chapter title, named for its topic.'),
          summary: z.string().max(1_000).describe('One or two lines for the table of contents: what the chapter holds.'),
        }),
      )
      .max(200)
      .describe('The ranges to archive, from chapters_segment\'s ranges (edit titles and summaries as you like). Empty: carry what is archived already.'),
    handoffNote: handoffNoteField,
    title: z.string().min(1).max(200).optional().describe('A name for the next session.'),
    preset: presetField,
    budgetTokens: budgetTokensField,
  }),
  confirm: (input) => ({
    title: 'Archive and continue in a new session?',
    message: `Recollect will archive ${input.chapters.length} chapter range${input.chapters.length === 1 ? '' : 's'} of this session verbatim and open a new chat that starts from the table of contents and the handoff note.`,
  }),
  run: async (input, services, ctx) => {
    const session = services.chapters.resolveSession(input.sessionId, { client: ctx.client, workspace: ctx.workspace });
    if (isRefusal(session)) return session;
    const result = await services.chapters.continue({
      sessionId: session.id,
      ranges: input.chapters,
      note: input.handoffNote,
      title: input.title,
      preset: input.preset,
      budgetTokens: input.budgetTokens,
      intent: 'continue',
      client: ctx.client,
    });
    if (isRefusal(result)) return result;
    const opened = await services.chapters.openNext(result, ctx.callerOpens);
    return { ...result, session: { id: session.id, how: session.how }, opened };
  },
});
