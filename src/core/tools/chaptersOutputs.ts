import { z } from 'zod';

/**
 * What the chapters tools return on success (the spec's "What success returns"), as the MCP
 * outputSchema states it. Nested items name the fields a client may rely on; answers may carry more.
 */
const budget = z.looseObject({ requested: z.number(), used: z.number(), remaining: z.number() });
const presetUsed = z.looseObject({ name: z.string(), budgetTokens: z.number(), chapterTargetTokens: z.number() });
const session = z.looseObject({ id: z.string(), how: z.string() });

export const chaptersSegmentOutput = z.object({
  ok: z.literal(true),
  session,
  archiveCeiling: z.number(),
  eventCount: z.number(),
  ranges: z.array(z.looseObject({ startSeq: z.number(), endSeq: z.number(), title: z.string(), summary: z.string(), estimatedTokens: z.number() })),
  toolResults: z.array(z.looseObject({ seq: z.number(), toolName: z.string(), bytes: z.number(), estimatedTokens: z.number(), excerpt: z.string() })),
  toolResultsOmitted: z.number(),
  plans: z.array(z.looseObject({ seq: z.number(), title: z.string(), status: z.string(), estimatedTokens: z.number(), outline: z.array(z.string()), verdict: z.string() })),
  plansOmitted: z.number(),
  livePlans: z.array(z.looseObject({})),
  modeActive: z.boolean(),
  existingChapters: z.array(z.looseObject({})),
  budgetHint: z.looseObject({ preset: z.string(), budgetTokens: z.number(), chapterTargetTokens: z.number() }),
});

export const chaptersContinueOutput = z.object({
  ok: z.literal(true),
  childSessionId: z.string(),
  presetUsed,
  chapters: z.array(z.looseObject({ id: z.string(), startSeq: z.number(), endSeq: z.number(), title: z.string(), tokens: z.number(), new: z.boolean() })),
  warnings: z.array(z.string()),
  budget,
  firstMessage: z.string(),
});

export const chaptersForkOutput = z.object({
  ok: z.literal(true),
  childSessionId: z.string(),
  presetUsed,
  budget,
  cites: z.array(z.string()),
  warnings: z.array(z.string()),
  firstMessage: z.string(),
});

export const chaptersSearchOutput = z.object({
  ok: z.literal(true),
  door: z.string(),
  results: z.array(z.looseObject({ id: z.string(), score: z.number(), date: z.string(), kind: z.string(), title: z.string() })),
  total: z.number(),
  shown: z.number(),
  budget,
  note: z.string(),
});

/** One of three answers, told apart by `action`: toc, search or read. */
export const chaptersArtifactOutput = z.object({
  ok: z.literal(true),
  action: z.enum(['toc', 'search', 'read']),
  ref: z.string(),
  of: z.number(),
  headings: z.array(z.looseObject({})).optional(),
  blocks: z.array(z.looseObject({ startLine: z.number(), endLine: z.number(), text: z.string() })).optional(),
  totalMatches: z.number().optional(),
  truncated: z.boolean().optional(),
  remainingMatches: z.number().optional(),
  start: z.number().optional(),
  end: z.number().optional(),
  lines: z.array(z.string()).optional(),
});

export const chaptersRuleProposeOutput = z.object({ ok: z.literal(true), id: z.string(), status: z.string(), text: z.string() });

export const chaptersRulesOutput = z.object({
  ok: z.literal(true),
  rules: z.array(z.looseObject({ id: z.string(), scope: z.string(), category: z.string(), text: z.string() })),
  shown: z.number(),
  active: z.looseObject({ project: z.number(), session: z.number() }),
  withheld: z.looseObject({ count: z.number(), why: z.string() }),
  budget,
});
