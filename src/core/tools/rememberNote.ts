import { z } from 'zod';
import { STATEMENT_MAX } from '../memory/memoryService';
import { citesField, scopeField, sourceField } from './commonFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  saved: z.literal('entry'),
  ok: z.literal(true),
  id: z.string(),
  path: z.string(),
  day: z.string(),
  scope: z.string(),
  source: z.string(),
  recorded_at: z.string(),
  warning: z.string().optional(),
});

export const rememberNoteTool = defineTool({
  name: 'remember_note',
  displayName: 'Log a note',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  output,
  description:
    'Append a timestamped entry to a day\'s log (a Markdown file in the vault, daily/YYYY-MM-DD.md) and index it at once. The refusals of a statement saved on its own apply: text over 4,000 characters, invalid Unicode, or a control character other than tab, newline and carriage return (or U+007F) is refused and nothing is written. Returns the entry id entry:<path>#<hash>.',
  input: z.strictObject({
    text: z.string().min(1).max(STATEMENT_MAX).describe('The line to log.'),
    date: z.string().max(10).optional().describe('YYYY-MM-DD: the day\'s log to append to. Default today in `timezone`.'),
    source: sourceField.optional(),
    scope: scopeField.optional(),
    timezone: z.string().max(64).optional().describe('IANA name (America/Sao_Paulo) or UTC offset from -12:00 to +14:00 (-03:00), so the entry is filed under the user\'s own day.'),
    cites: citesField.optional(),
  }),
  confirm: (input) => ({ title: 'Log this note?', message: input.text }),
  run: (input, services, ctx) => services.memory.vault.rememberNote(input, ctx.client),
});
