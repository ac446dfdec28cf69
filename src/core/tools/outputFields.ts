import { z } from 'zod';

/** Answer fields several tools share, written once so every output schema says the same thing. */
export const tokenBudget = z.object({ requested: z.number(), used: z.number(), remaining: z.number() });

export const indexState = z.object({ stale: z.boolean(), changed_files: z.number() });

/** Text another agent wrote, excerpted or whole (`full_chars` when cut), marked as data rather than instructions. */
export const untrustedText = z.object({ author: z.string(), text: z.string(), untrusted: z.boolean(), full_chars: z.number().optional() });
