import { z } from 'zod';
import { fusedHistorySearch } from '../history/historyRanking';
import { withholdUnrelated } from '../history/withholding';
import { refuse } from '../refusal';
import type { Services } from '../services';
import { parseTimeRange, TIME_RANGE_FORMS } from '../text/time';
import { countTokens } from '../text/tokens';
import { defineTool, type ToolContext } from './toolDefinition';

/** Kinds a `reference` read keeps: the request, what each tool was called with and returned, and the replies. */
const REFERENCE_KINDS = new Set(['user', 'tool_call', 'tool_result', 'assistant']);

const input = z.strictObject({
  mode: z.enum(['list', 'read', 'tool_list', 'tool', 'search']).optional().describe('list (default): recent runs with task_id; read: runs in full; tool_list: reusable calls of the last 16 runs; tool: one call\'s raw output; search: past messages.'),
  task_id: z.union([z.string().min(1).max(40), z.array(z.string().min(1).max(40)).min(1).max(16)]).optional().describe('read: one task_id or a list; tool: the run holding the call.'),
  name: z.string().min(1).max(200).optional().describe('tool: the tool name whose output to return.'),
  scope: z.enum(['reference', 'full']).optional().describe('read: reference (default) keeps the request, tool calls with their outputs and the replies; full keeps everything (reasoning, system notes).'),
  match: z.enum(['keyword', 'semantic']).optional().describe('search: keyword matches text across the whole archive; semantic matches meaning; omitted: both, fused.'),
  query: z.string().min(1).max(500).optional().describe('search: what to look for.'),
  time_range: z.string().max(80).optional().describe('list/search: "24h", "7d", "2w", "1m" (a month), "1y", "all", or "<ISO>..<ISO>".'),
  limit: z.number().int().min(1).max(50).optional().describe('list: runs (default 20); search: hits (default 10). At most 50.'),
});

type Input = z.infer<typeof input>;

/** Messages taken from the semantic ranking into the default search's fusion. */
const SEMANTIC_POOL = 200;

/** One message a search found (eventHits.ts). */
const eventHit = z.object({
  task_id: z.string(),
  session_id: z.string(),
  source: z.string(),
  session_title: z.string().nullable(),
  kind: z.string(),
  tool_name: z.string().nullable(),
  snippet: z.string(),
  at: z.string().nullable(),
});
const session = z.object({ id: z.string(), source: z.string(), title: z.string().nullable(), workspace: z.string().nullable(), how: z.string() });
const event = z.object({
  seq: z.number(),
  kind: z.string(),
  text: z.string(),
  bytes: z.number(),
  at: z.string().nullable(),
  tool_name: z.string().nullable(),
  call_id: z.string().nullable(),
  tool_input: z.unknown(),
  is_error: z.boolean(),
});

/** One shape per mode (and per search match); a refusal is the one shape every tool shares (jsonSchema.ts). */
const output = z.union([
  // list
  z.object({
    ok: z.literal(true),
    session,
    runs: z.array(z.object({ task_id: z.string(), seq: z.number(), objective: z.string().nullable(), started_at: z.string().nullable(), ended_at: z.string().nullable(), events: z.number(), chars: z.number() })),
  }),
  // list or tool_list before any session was imported
  z.object({ ok: z.literal(true), session: z.null(), runs: z.array(z.never()), note: z.string() }),
  // read
  z.object({
    ok: z.literal(true),
    scope: z.enum(['reference', 'full']),
    runs: z.array(
      z.union([
        z.object({ task_id: z.string(), session_id: z.string(), objective: z.string().nullable(), started_at: z.string().nullable(), ended_at: z.string().nullable(), events: z.array(event) }),
        z.object({ task_id: z.string(), withheld: z.literal(true), objective: z.string(), chars: z.number(), note: z.string() }),
      ]),
    ),
    tokens: z.number(),
    withheld: z.object({
      checked: z.boolean(),
      reason: z.string(),
      model: z.string().optional(),
      judgement_failed: z.literal(true).optional(),
      current_request: z.object({ session_id: z.string(), how: z.string(), task_id: z.string(), text: z.string() }).optional(),
      judged: z.array(z.object({ task_id: z.string(), related: z.boolean(), confidence: z.number() })).optional(),
      ids: z.array(z.string()).optional(),
      already_withheld: z.array(z.string()).optional(),
    }),
  }),
  // tool_list
  z.object({
    ok: z.literal(true),
    session,
    calls: z.array(z.object({ task_id: z.string(), name: z.string(), input: z.unknown(), at: z.string().nullable(), result_bytes: z.number().nullable() })),
  }),
  // tool
  z.object({ ok: z.literal(true), task_id: z.string(), name: z.string(), output: z.string(), is_error: z.boolean(), bytes: z.number() }),
  // search, match=keyword
  z.object({ ok: z.literal(true), total: z.number(), shown: z.number(), hits: z.array(eventHit.extend({ score: z.number(), matched: z.enum(['all', 'partial']) })) }),
  // search, match=semantic (answered, or off and why)
  z.object({
    ok: z.literal(true),
    match: z.string(),
    semantic: z.boolean(),
    model: z.string(),
    shown: z.number(),
    hits: z.array(eventHit.extend({ similarity: z.number() })),
    not_indexed: z.number().optional(),
    note: z.string().optional(),
  }),
  z.object({ ok: z.literal(true), match: z.string(), semantic: z.boolean(), hits: z.array(z.never()), reason: z.string() }),
  // search, both fused
  z.object({
    ok: z.literal(true),
    semantic: z.union([z.object({ model: z.string() }), z.object({ off: z.string() })]),
    total: z.number(),
    shown: z.number(),
    hits: z.array(eventHit.extend({ score: z.number(), matched: z.enum(['all', 'partial', 'meaning', 'next to a match']) })),
  }),
]);

export const chatHistoryTool = defineTool({
  name: 'chat_history',
  displayName: 'Chat history',
  family: 'history',
  effects: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  output,
  description:
    'This session\'s own action log, from the imported sessions (VS Code chat, Copilot, Claude Code, Codex). mode=list: recent runs. mode=read: one or more runs in full (see scope); with recollect.history.withholdUnrelatedRuns on in VS Code, a run of 4096+ characters a model judges unrelated (confidence ≥ 0.7) becomes a one-line note with its objective, once per run per session (reading again returns it whole; `withheld` says what was judged or why not). mode=tool_list: the tool calls of the last 16 runs, to reuse a paid-for fetch. mode=tool: one call\'s raw output by task_id + name. mode=search: past messages within time_range; match=keyword is BM25 over the whole archive in any form of a word (CJK inside sentences), every-word hits first, then the best partial ones; match=semantic is by meaning (hits with `similarity`); omitted, both are fused and a message is also credited for those said next to it; each hit\'s `matched` is all, partial, meaning or "next to a match". "This session" is the newest session of the caller\'s kind in its workspace; each answer names the session and how it was chosen.',
  input,
  run: (args, services, ctx) => chatHistory(args, services, ctx),
});

async function chatHistory(args: Input, services: Services, ctx: ToolContext) {
  const history = services.history;
  const mode = args.mode ?? 'list';
  const range = args.time_range === undefined ? {} : parseTimeRange(args.time_range, services.store.now);
  if (!range) return refuse(`time_range "${args.time_range}" is none of the accepted forms: ${TIME_RANGE_FORMS}`);

  if (mode === 'search') {
    if (!args.query) return refuse('mode=search needs a query');
    if (args.match === 'semantic') {
      const limit = args.limit ?? 10;
      const found = await services.semantic.nearest(args.query, { corpus: 'history', k: limit, since: range.since, before: range.before });
      if (!found.ok) return { ok: true, match: 'semantic', semantic: false, hits: [], reason: `semantic search is off: ${found.reason}. Use match=keyword.` };
      const hits = history.eventHits(found.hits.map((h) => ({ id: Number(h.docid), similarity: h.similarity })));
      const progress = services.semantic.progress();
      const behind = progress ? progress.history.total - progress.history.indexed : 0;
      return {
        ok: true,
        match: 'semantic',
        semantic: true,
        model: found.model,
        shown: hits.length,
        hits,
        ...(behind > 0 ? { not_indexed: behind, note: `${behind} messages are not indexed by meaning yet (indexing runs in the background) and were not searched; match=keyword searches them all` } : {}),
      };
    }
    if (args.match === 'keyword') return history.search({ query: args.query, limit: args.limit ?? 10, since: range.since, before: range.before });
    // Omitted: both, fused (historyRanking.ts); a model that cannot answer leaves the keyword ranking, and the reply says why.
    const near = await services.semantic.nearest(args.query, { corpus: 'history', k: SEMANTIC_POOL, since: range.since, before: range.before });
    const fused = fusedHistorySearch(services.store.db, services.store.version, { query: args.query, limit: args.limit ?? 10, since: range.since, before: range.before, now: services.store.now }, near.ok ? near.hits : []);
    if (!fused.ok) return refuse(fused.reason);
    return { ...fused, semantic: near.ok ? { model: near.model } : { off: near.reason } };
  }

  if (mode === 'read' || mode === 'tool') {
    const ids = args.task_id === undefined ? [] : Array.isArray(args.task_id) ? args.task_id : [args.task_id];
    if (!ids.length) return refuse(`mode=${mode} needs a task_id; mode=list shows them`);
    if (mode === 'tool') {
      if (!args.name) return refuse('mode=tool needs the tool name; mode=tool_list shows the calls');
      if (ids.length > 1) return refuse('mode=tool takes one task_id');
      return history.toolOutput(ids[0] as string, args.name);
    }
    const scope = args.scope ?? 'reference';
    const runs = [];
    for (const id of ids) {
      const run = history.readRun(id);
      if (!run) return refuse(`no run with task_id "${id}"; mode=list shows the recent ones`);
      runs.push(scope === 'full' ? run : { ...run, events: run.events.filter((e) => REFERENCE_KINDS.has(e.kind)) });
    }
    const session = history.currentSession({ client: ctx.client, workspace: ctx.workspace });
    const shown = await withholdUnrelated({ store: services.store, model: services.decisionModel, session }, runs);
    return { ok: true, scope, runs: shown.runs, tokens: countTokens(JSON.stringify(shown.runs)), withheld: shown.report };
  }

  const session = history.currentSession({ client: ctx.client, workspace: ctx.workspace });
  if (!session) return { ok: true, session: null, runs: [], note: 'no sessions imported yet: run "recollect import" or let the extension import them' };
  if (mode === 'tool_list') return { ok: true, session, calls: history.toolList(session.id) };
  return { ok: true, session, runs: history.listRuns(session.id, args.limit ?? 20, range.since) };
}
