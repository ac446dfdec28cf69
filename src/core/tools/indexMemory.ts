import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const indexMemoryTool = defineTool({
  name: 'index_memory',
  displayName: 'Index memory',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
  description:
    'Bring the search index up to date with the Markdown vault: re-reads notes and day logs a person added, edited or deleted (changed files by size, time and hash), chunks long notes, and embeds what has no vector yet where an embedding provider is configured. Run it when a search or get_context reports `index.stale`; saved facts are searchable by keyword without it. Takes no arguments.',
  input: z.strictObject({}),
  run: (_input, services) => services.memory.vault.reindex(),
});
