import { z } from 'zod';
import { STATEMENT_MAX } from '../memory/memoryService';
import { citesField, scopeField, sourceField } from './commonFields';
import { savedFact } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  z.object({
    ok: z.literal(true),
    saved: z.literal('note'),
    id: z.string(),
    path: z.string(),
    day: z.string(),
    scope: z.string(),
    source: z.string(),
    recorded_at: z.string(),
    warning: z.string().optional(),
  }),
  savedFact,
]);

export const rememberTool = defineTool({
  name: 'remember',
  displayName: 'Remember',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Primary write: keep something the user asked you to remember. Pass `statement` in plain words; add `subject`, `predicate` and `object` together only for a value that stays current until it changes (the same subject+predicate+scope again replaces the value; the old one stays in history). A standing rule is a fact: subject = what it governs, predicate "rule", object = the rule. The sentence also goes to the day\'s Markdown log in the vault (id entry:<path>#<hash>). Over 4,000 characters is refused, never cut; a statement saved on its own holding invalid Unicode or a control character (other than tab, newline, carriage return) is refused and nothing is written.',
  input: z.strictObject({
    statement: z.string().min(1).max(STATEMENT_MAX).describe('The thing to remember, in plain words.'),
    subject: z.string().min(1).max(500).optional().describe('With predicate and object: what the fact is about.'),
    predicate: z.string().min(1).max(200).optional().describe('With subject and object: the property, e.g. "uses", "rule", "owner".'),
    object: z.string().min(1).max(STATEMENT_MAX).optional().describe('With subject and predicate: the current value.'),
    source: sourceField.optional(),
    scope: scopeField.optional(),
    timezone: z.string().max(64).optional().describe('IANA name (America/Sao_Paulo) or UTC offset from -12:00 to +14:00 (-03:00), so a note is filed under the user\'s own day.'),
    cites: citesField.optional(),
  }),
  confirm: (input) => ({
    title: 'Remember this?',
    message: input.subject ? `${input.subject} · ${input.predicate} → ${input.object}` : input.statement,
  }),
  run: (input, services, ctx) => services.memory.remember(input, ctx.client),
});
