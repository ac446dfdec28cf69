import { z } from 'zod';
import { isRefusal } from '../refusal';
import { budgetTokensField, childSessionAnswer, handoffNoteField } from './chaptersContinue';
import { presetField, sessionIdField } from './chaptersSegment';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = childSessionAnswer.extend({ cites: z.array(z.string()) });

export const chaptersForkTool = defineTool({
  name: 'chapters_fork',
  displayName: 'Chapters: fork',
  family: 'chapters',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Branch intent ("let\'s try another angle from here"): opens a sibling session whose first message cites the chapters this session already has (the whole ancestry\'s table of contents) plus your handoff note, and writes nothing — no chapter, no record. Events not archived yet stay out of the branch (warnings say which); chapters_continue archives them, and a person\'s /fork archives and branches in one step. Over budget is refused with the numbers. Returns childSessionId, presetUsed, budget, cites, warnings, firstMessage and opened.',
  input: z.strictObject({
    sessionId: sessionIdField,
    handoffNote: handoffNoteField,
    preset: presetField,
    budgetTokens: budgetTokensField,
  }),
  run: async (input, services, ctx) => {
    const session = services.chapters.resolveSession(input.sessionId, { client: ctx.client, workspace: ctx.workspace });
    if (isRefusal(session)) return session;
    const result = services.chapters.fork({ sessionId: session.id, note: input.handoffNote, preset: input.preset, budgetTokens: input.budgetTokens });
    if (isRefusal(result)) return result;
    const opened = await services.chapters.openNext({ ...result, intent: 'fork' }, ctx.callerOpens);
    return { ...result, session: { id: session.id, how: session.how }, opened };
  },
});
