import { z } from 'zod';
import { BUILTIN_TOPICS } from '../guides/builtinGuides';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  topics: z.array(z.string()),
  guide: z.string(),
  sources: z.record(z.string(), z.array(z.string())),
  tokens: z.number(),
  note: z.string().optional(),
});

export const reasoningGuideTool = defineTool({
  name: 'reasoning_guide',
  displayName: 'Reasoning guide',
  family: 'history',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    `Fetch the full rule sets for every topic this turn needs in one call; the result joins each guide under a \`## <topic>\` heading. Built-in topics: ${BUILTIN_TOPICS.join(', ')} (office: creating or changing .docx/.xlsx/.pptx so Office and iWork accept them; figure: charts, diagrams and formulas — read before writing one). A person can add or extend topics with Markdown files in the workspace's .recollect/guides/ folder; an unknown topic is refused with the list of known ones. Recollect cannot tell whether the caller is a sub-agent, so subagent_dispatch always returns the full rules, which open with what to do when you cannot dispatch.`,
  input: z.strictObject({
    topics: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(32)
      .describe(`Topics to fetch (at least one): ${BUILTIN_TOPICS.join(', ')}, or one a person added.`),
  }),
  run: (input, services) => services.guides.get(input.topics),
});
