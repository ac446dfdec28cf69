import { z } from 'zod';
import { isRefusal } from '../refusal';
import { PRESET_NAMES } from '../chapters/presets';
import { defineTool } from './toolDefinition';

export const sessionIdField = z
  .string()
  .regex(/^ses_[0-9a-f]{16}$/, 'must be a session id such as ses_0123456789abcdef')
  .optional()
  .describe('Default: this session, the newest of the calling client\'s kind in its workspace (the answer says which and how it was chosen).');

export const presetField = z
  .enum(PRESET_NAMES)
  .optional()
  .describe('Budget preset: compact (first message ≤ 2,000 tokens, chapters ~6,000), standard (4,000 / 12,000, the default) or generous (8,000 / 24,000).');

/** A plan the segment holds, with the verdict on whether it is still live. */
const planRow = z.object({
  seq: z.number(),
  toolName: z.string(),
  title: z.string(),
  status: z.string(),
  resultSeq: z.number().nullable(),
  bytes: z.number(),
  estimatedTokens: z.number(),
  outline: z.array(z.string()),
  verdict: z.string(),
});

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  session: z.object({
    how: z.string(),
    id: z.string(),
    source: z.string(),
    title: z.string().nullable(),
  }),
  ok: z.literal(true),
  archiveCeiling: z.number(),
  eventCount: z.number(),
  sessionEvents: z.number(),
  openTurn: z.object({
    fromSeq: z.number(),
    reason: z.string(),
  }).nullable(),
  ranges: z.array(z.object({
    startSeq: z.number(),
    endSeq: z.number(),
    title: z.string(),
    summary: z.string(),
    estimatedTokens: z.number(),
    runs: z.number(),
    overTarget: z.boolean(),
  })),
  toolResults: z.array(z.object({
    seq: z.number(),
    toolName: z.string().nullable(),
    bytes: z.number(),
    estimatedTokens: z.number(),
    excerpt: z.string(),
    artifact: z.string().nullable(),
  })),
  toolResultsOmitted: z.number(),
  plans: z.array(planRow),
  plansOmitted: z.number(),
  livePlans: z.array(planRow),
  modeActive: z.boolean(),
  existingChapters: z.array(z.object({
    id: z.string(),
    title: z.string(),
    startSeq: z.number(),
    endSeq: z.number(),
    tokens: z.number(),
  })),
  budgetHint: z.object({
    preset: z.string(),
    budgetTokens: z.number(),
    chapterTargetTokens: z.number(),
    presets: z.object({
      compact: z.object({
        budgetTokens: z.number(),
        chapterTargetTokens: z.number(),
      }),
      standard: z.object({
        budgetTokens: z.number(),
        chapterTargetTokens: z.number(),
      }),
      generous: z.object({
        budgetTokens: z.number(),
        chapterTargetTokens: z.number(),
      }),
    }),
    carriedChapters: z.number(),
  }),
});

export const chaptersSegmentTool = defineTool({
  name: 'chapters_segment',
  displayName: 'Chapters: what can be archived',
  family: 'chapters',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Facts for archiving this session as chapters before you continue or fork it ("we are expensive — what can we archive?"). Returns archiveCeiling (the highest event seq that can be archived: never inside an unfinished turn), eventCount (events at or below it), ranges (chapter-shaped ranges over what is not archived yet, whole requests grouped to the preset\'s chapter target; title and summary are yours to edit, the chapter text is always the events themselves), toolResults [{seq, toolName, bytes, estimatedTokens, excerpt, artifact}] (real sizes; the 60 largest when there are more, the rest counted in toolResultsOmitted), plans [{seq, title, status, resultSeq, bytes, estimatedTokens, outline, verdict}] from todo/plan tool calls (the 10 newest snapshots; plansOmitted counts the rest), livePlans (plan calls above the ceiling, in the unfinished turn: archivable by nothing), modeActive (this session itself opened with a chapters table of contents), existingChapters and budgetHint. Reads only; pass the ranges you keep to chapters_continue.',
  input: z.strictObject({
    sessionId: sessionIdField,
    preset: presetField,
    uptoSeq: z.number().int().min(1).optional().describe('Propose ranges only up to this seq (default: the archive ceiling).'),
  }),
  run: (input, services, ctx) => {
    const session = services.chapters.resolveSession(input.sessionId, { client: ctx.client, workspace: ctx.workspace });
    if (isRefusal(session)) return session;
    const result = services.chapters.segment(session.id, input.preset, input.uptoSeq);
    return isRefusal(result) ? result : { ...result, session: { ...result.session, how: session.how } };
  },
});
