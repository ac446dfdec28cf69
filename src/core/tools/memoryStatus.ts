import { z } from 'zod';
import { defineTool } from './toolDefinition';

/** How far recall by meaning has got; an endpoint's state names its URL, the bundled model's its folder. */
const embeddingsState = z.object({
  error: z.string().optional(),
  indexed: z.number().optional(),
  total: z.number().optional(),
  not_embedded: z.number().optional(),
  memory: z.object({
    indexed: z.number(),
    total: z.number(),
  }).optional(),
  history: z.object({
    indexed: z.number(),
    total: z.number(),
  }).optional(),
  indexing: z.boolean().optional(),
  paused: z.string().optional(),
  provider: z.enum(['local', 'endpoint']).nullable(),
  model: z.string().nullable(),
});

/** What an answer carries; a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.object({
  vault: z.object({
    stale: z.boolean(),
    changed_files: z.number(),
    path: z.string(),
  }),
  store: z.object({
    home: z.string(),
    journal_problems: z.number(),
  }),
  memory: z.object({
    budget_mb: z.number(),
    budget_source: z.enum(['environment', 'setting', 'default']),
    rss_mb: z.number(),
    peak_rss_mb: z.number(),
    js_heap_mb: z.number(),
    buffers_mb: z.number(),
    cache: z.object({
      limit_mb: z.number(),
      held_mb: z.number(),
      unsaved_mb: z.number(),
      spills: z.number(),
      spill_file_mb: z.number(),
      copies_mb: z.number(),
      copy_reloads: z.number(),
      copy_page_reads: z.number(),
      evictions: z.number(),
      reloads: z.number(),
      pressure_checkpoints: z.number(),
    }),
    sqlite_cache_mb: z.number(),
    reserved_mb: z.record(z.string(), z.number()).optional(),
    compaction: z.string().optional(),
  }),
  warnings: z.array(z.string()),
  embeddings: z.union([embeddingsState.extend({ endpoint: z.string().nullable() }), embeddingsState.extend({ model_dir: z.string().nullable(), loaded: z.boolean() })]).optional(),
  semantic: z.boolean(),
  semantic_reason: z.string().nullable(),
  notes: z.number(),
  entries: z.number(),
  chunks: z.number(),
  entities: z.number(),
  facts: z.number(),
  current_facts: z.number(),
  retired: z.object({
    facts: z.number(),
    entries: z.number(),
    notes: z.number(),
  }),
  store_owner: z.object({
    owner: z.object({ pid: z.number(), kind: z.string(), build: z.string() }),
    this_process: z.enum(['owner', 'client']),
    pid: z.number(),
  }).optional(),
  ok: z.literal(true),
});

export const memoryStatusTool = defineTool({
  name: 'memory_status',
  displayName: 'Memory status',
  family: 'memory',
  effects: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  output,
  description:
    "Counts of notes, day-log entries, indexed chunks, entities, facts (superseded included; current_facts apart) and retired memories; `semantic` (whether search by meaning can answer now, else why; the model is asked first), `embeddings` (model, provider, indexing progress per corpus), the vault folder with `stale` / `changed_files`, `memory` (budget, RSS and cache of the process holding the database), store warnings, and `store_owner` (that process, and whether the caller is it). Takes no arguments.",
  input: z.strictObject({}),
  run: async (_input, services, ctx) => {
    const role = ctx.store ?? services.storeRole?.();
    return { ...(await services.memory.statusNow()), ...(role ? { store_owner: role } : {}) };
  },
});
