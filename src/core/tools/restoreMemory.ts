import { z } from 'zod';
import { defineTool } from './toolDefinition';

export const restoreMemoryTool = defineTool({
  name: 'restore_memory',
  displayName: 'Restore a memory',
  family: 'memory',
  effects: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  description:
    'Put a retired memory back exactly as it was. It refuses to overwrite a file that now occupies the same path (move or rename that file first). A fact superseded while it was retired comes back as history.',
  input: z.strictObject({
    id: z.string().min(1).max(700).describe('The id of the retired memory (memory_map lists them under `retired`).'),
  }),
  confirm: (input) => ({ title: 'Restore this memory?', message: `${input.id} will return to recall.` }),
  run: (input, services) => services.recall.restore(input.id),
});
