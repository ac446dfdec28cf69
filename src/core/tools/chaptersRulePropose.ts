import { z } from 'zod';
import { isRefusal, refuse } from '../refusal';
import { projectFolderProblem } from '../rules/projectFolder';
import { RULE_CATEGORIES } from '../rules/rulesSchema';
import { RULE_TEXT_MAX } from '../rules/rulesService';
import { sessionIdField } from './chaptersSegment';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  ok: z.literal(true),
  text: z.string(),
  id: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']),
  duplicate: z.boolean(),
});

export const chaptersRuleProposeTool = defineTool({
  name: 'chapters_rule_propose',
  displayName: 'Chapters: propose a rule',
  family: 'chapters',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Propose a rule ("we learned a team convention"): a write-once candidate for this project (scope project, the default) or this session (scope session). It is NOT in force until a person approves it on this machine in Recollect\'s rule approval view — no tool can approve one — so do not follow it as a rule until chapters_rules returns it. Proposing the same words again (any case or spacing) changes nothing and says where the rule stands; a rejected rule stays rejected. Returns ok and text (the proposal reply), with id and status.',
  input: z.strictObject({
    text: z.string().min(1).max(RULE_TEXT_MAX).describe('The rule, in one to a few sentences.'),
    scope: z.enum(['project', 'session']).optional().describe('project (default): this workspace; session: only this session.'),
    category: z.enum(RULE_CATEGORIES).optional().describe('What kind of rule (default convention).'),
    rationale: z.string().max(2_000).optional().describe('Why: what happened that taught it. Shown to the person who approves.'),
    project: z.string().min(1).max(1_000).optional().describe('scope project: the project folder, an absolute path that exists on this machine (default: the caller\'s workspace).'),
    sessionId: sessionIdField,
  }),
  run: async (input, services, ctx) => {
    const scope = input.scope ?? 'project';
    const badProject = input.project === undefined ? undefined : projectFolderProblem(input.project);
    if (badProject) return refuse(`${badProject}. Nothing was proposed.`);
    let sessionId = input.sessionId;
    if (!sessionId) {
      const current = services.chapters.resolveSession(undefined, { client: ctx.client, workspace: ctx.workspace });
      if (isRefusal(current)) {
        if (scope === 'session') return current;
      } else sessionId = current.id;
    }
    return services.rules.propose({ text: input.text, scope, category: input.category, rationale: input.rationale, project: input.project ?? ctx.workspace, sessionId }, ctx.client);
  },
});
