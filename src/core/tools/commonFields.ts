import { z } from 'zod';
import { nameProblem } from '../text/textRules';

/** A string refused, with the reason, when it is not one line of printable text (see nameProblem). */
const printable = (field: string) => (text: string, ctx: z.RefinementCtx) => {
  const problem = nameProblem(field, text);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
};

/** Argument shapes several tools share, described once so every tool tells the model the same thing. */
export const scopeField = z
  .string()
  .max(110)
  .describe('"global" (default), "project:<slug>" or "team:<name>" (shared with the team pool).');

export const sourceField = z
  .string()
  .min(1)
  .max(100)
  .superRefine(printable('source'))
  .describe('The app or agent saving this (e.g. "claude-code"). Default: the connecting client.');

export const citesField = z
  .array(z.string().min(1).max(500).superRefine(printable('a cite')))
  .max(20)
  .describe('What this save builds on: note paths, memory ids or subjects a read returned.');
