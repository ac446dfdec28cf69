import { z } from 'zod';
import { scopeField } from './commonFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  note: z.string().optional(),
  more: z.number().optional(),
  ok: z.literal(true),
  name: z.string(),
  entities: z.array(z.object({
    notes: z.array(z.object({
      id: z.string(),
      title: z.string(),
      scope: z.string(),
    })),
    more_facts: z.boolean().optional(),
    name: z.string(),
    match: z.enum(['path', 'name', 'partial', 'alias']),
    scopes: z.array(z.string()),
    aliases: z.array(z.string()),
    facts: z.array(z.object({
      id: z.string(),
      predicate: z.string(),
      object: z.string(),
      scope: z.string(),
      valid_from: z.string(),
      recorded_at: z.string(),
    })),
  })),
  count: z.number(),
});

export const lookupEntityTool = defineTool({
  name: 'lookup_entity',
  displayName: 'Look up an entity',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  output,
  description:
    'Find a person, project or concept by name or alias, with its current facts and the notes named for it. No embedding call. It matches fact subjects, aliases (facts with predicate "alias"/"aka", and `aliases:` in a note\'s front matter), note titles and note paths — not words inside note text (search_text finds those).',
  input: z.strictObject({
    name: z.string().min(1).max(200).describe('Entity name or alias.'),
    scope: scopeField.optional().describe('Restrict to entities whose facts or source note belong to this scope: "global" or "project:<slug>".'),
  }),
  run: (input, services) => services.recall.lookupEntity(input),
});
