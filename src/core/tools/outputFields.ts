import { z } from 'zod';

/** Answer fields several tools share, written once so every output schema says the same thing. */
export const tokenBudget = z.object({ requested: z.number(), used: z.number(), remaining: z.number() });

export const indexState = z.object({ stale: z.boolean(), changed_files: z.number() });
