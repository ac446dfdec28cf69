import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const memoryStatusTool = defineTool({
  name: 'memory_status',
  displayName: 'Memory status',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  description:
    'Counts of notes (Markdown files in the vault), entries (day-log entries), chunks (what the keyword index holds for them), entities and facts (superseded values included, current_facts separately), retired memories, whether semantic search can answer now (`semantic`, with the reason when it cannot; the model is asked first), `embeddings` (the model and provider, and how far indexing has got: indexed of total, per corpus memory and history), the vault folder with `stale` / `changed_files`, and any store warnings a person should know about. Takes no arguments.',
  input: z.strictObject({}),
  run: (_input, services) => services.memory.statusNow(),
});
