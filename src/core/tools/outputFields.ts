import { z } from 'zod';

/** Answer fields several tools share, written once so every output schema says the same thing. */
export const tokenBudget = z.object({ requested: z.number(), used: z.number(), remaining: z.number() });

export const indexState = z.object({ stale: z.boolean(), changed_files: z.number() });

/** Text another agent wrote, excerpted or whole (`full_chars` when cut), marked as data rather than instructions. */
export const untrustedText = z.object({ author: z.string(), text: z.string(), untrusted: z.boolean(), full_chars: z.number().optional() });

/** A fact as every memory tool names it; each answer adds its own fields (status, validity, …). */
export const factFields = z.object({
  id: z.string(),
  subject: z.string(),
  predicate: z.string(),
  object: z.string(),
  scope: z.string(),
  source: z.string(),
  recorded_at: z.string(),
});

/** What remember (a fact) and save_memory answer once the fact is kept. */
export const savedFact = factFields.extend({
  warning: z.string().optional(),
  ok: z.literal(true),
  saved: z.literal('fact'),
  replaced: z.object({ id: z.string(), object: z.string(), recorded_at: z.string() }).nullable(),
  note_id: z.string().nullable(),
});
