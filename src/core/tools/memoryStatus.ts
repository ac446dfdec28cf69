import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const memoryStatusTool = defineTool({
  name: 'memory_status',
  displayName: 'Memory status',
  family: 'memory',
  description:
    'Counts of notes, entries, chunks, entities and facts (superseded values included, current_facts separately), whether semantic search can answer now (`semantic`, with the reason when it cannot), and any store warnings a person should know about. Takes no arguments.',
  input: z.strictObject({}),
  run: (_input, services) => services.memory.status(),
});
