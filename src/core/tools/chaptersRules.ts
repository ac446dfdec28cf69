import { z } from 'zod';
import { isRefusal } from '../refusal';
import { RULES_DEFAULT_BUDGET } from '../rules/rulesService';
import { sessionIdField } from './chaptersSegment';
import { tokenBudget } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  rules: z.array(z.object({
    id: z.string(),
    scope: z.enum(['session', 'project']),
    category: z.string(),
    text: z.string(),
  })),
  shown: z.number(),
  active: z.object({
    project: z.number(),
    session: z.number(),
  }),
  withheld: z.object({
    count: z.number(),
    why: z.string(),
    ids: z.array(z.string()),
  }),
  notInForce: z.object({
    awaitingApproval: z.number(),
    rejected: z.number(),
    note: z.string(),
  }),
  tiers: z.object({
    project: z.string().nullable(),
    session: z.string().nullable(),
  }),
  scoring: z.string(),
  budget: tokenBudget,
});

export const chaptersRulesTool = defineTool({
  name: 'chapters_rules',
  displayName: 'Chapters: rules for a task',
  family: 'chapters',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description: `Before starting a task, the rules that apply to it: the approved rules (approved by a person on this machine) of this project and this session, best first by the same BM25 scorer as chapters_search against the task description, within a token budget (default ${RULES_DEFAULT_BUDGET}). Returns rules [{id, scope, category, text}], shown, active (rules in force per tier), withheld (always: the count left out and why, also when nothing was), notInForce (proposed rules awaiting approval or rejected: not to be followed) and budget.`,
  input: z.strictObject({
    task: z.string().min(1).max(2_000).describe('What you are about to do, in a sentence or two.'),
    project: z.string().min(1).max(1_000).optional().describe('The project folder (default: the caller\'s workspace).'),
    sessionId: sessionIdField,
    budget: z.number().int().min(50).max(16_000).optional().describe(`Token budget for the rules (default ${RULES_DEFAULT_BUDGET}).`),
  }),
  run: (input, services, ctx) => {
    let sessionId = input.sessionId;
    if (!sessionId) {
      const current = services.chapters.resolveSession(undefined, { client: ctx.client, workspace: ctx.workspace });
      if (!isRefusal(current)) sessionId = current.id;
    }
    return services.rules.assemble({ task: input.task, project: input.project ?? ctx.workspace, sessionId, budget: input.budget });
  },
});
