import { z } from 'zod';
import { indexState } from './outputFields';
import { defineTool } from './toolDefinition';

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  embeddings: z.union([z.object({
    embedded: z.number(),
    remaining: z.number(),
    error: z.string().optional(),
  }), z.object({
    configured: z.boolean(),
    reason: z.string(),
  })]),
  index: indexState,
  more_skipped: z.number().optional(),
  ok: z.literal(true),
  vault: z.string(),
  files: z.object({
    added: z.number(),
    modified: z.number(),
    deleted: z.number(),
    rendered: z.number(),
    touched: z.number(),
  }),
  entries: z.object({
    added: z.number(),
    edited: z.number(),
    removed: z.number(),
    restored: z.number(),
    rewritten: z.number(),
  }),
  chunks_indexed: z.number(),
  skipped: z.array(z.object({
    path: z.string(),
    reason: z.string(),
  })),
});

export const indexMemoryTool = defineTool({
  name: 'index_memory',
  displayName: 'Index memory',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
  output,
  description:
    'Bring the search index up to date with the Markdown vault: re-reads notes and day logs a person added, edited or deleted (changed files by size, time and hash), chunks long notes, and embeds what has no vector yet where an embedding provider is configured. Run it when a search or get_context reports `index.stale`; saved facts are searchable by keyword without it. Takes no arguments.',
  input: z.strictObject({}),
  run: (_input, services) => services.memory.vault.reindex(),
});
