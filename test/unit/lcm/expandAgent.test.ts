import { countTokens } from '../../../src/core/text/tokens';
import { describe, expect, it } from 'vitest';
import type { ModelMessage, ModelReply } from '../../../src/core/lcm/languageModel';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { callTool, say, ScriptedModel, type ScriptedCall } from '../helpers/scriptedModel';
import { deepestSession, importedFixtures } from './lcmFixture';
import type { LcmConfig } from '../../../src/core/lcm/lcmConfig';

type Result = Record<string, unknown> & { ok: boolean; answer?: string; citedIds?: string[]; truncatedBecause?: string[] };

/** The DAG is built without a model; the scripted model is attached afterwards, as a host would. */
async function withModel(model: ScriptedModel, config: Partial<LcmConfig> = {}): Promise<Services> {
  const s = await importedFixtures({ lcm: config });
  s.languageModel = model;
  return s;
}

const expandQuery = async (s: Services, input: object) => (await invokeTool(findTool('lcm_expand_query')!, input, s, { client: 'claude-code' })) as Result;
const seedIds = (call: ScriptedCall) => [...(call.messages[1]?.content ?? '').matchAll(/### (sum_[0-9a-f]{16})/g)].map((m) => m[1]!);
const toolResults = (call: ScriptedCall) => call.messages.filter((m): m is Extract<ModelMessage, { role: 'tool' }> => m.role === 'tool').map((m) => JSON.parse(m.content) as Record<string, unknown>);
const lastExpansion = (call: ScriptedCall) => toolResults(call).filter((r) => r.ok === true).at(-1) as { expansions: { children: { summaryId: string }[]; messages: { id: number }[] }[] } | undefined;

describe('lcm_expand_query sub-agent (scripted model)', () => {
  it('scripted model: is offered only lcm_expand, cannot run any other tool, walks down to source and cites the ids', async () => {
    const model = new ScriptedModel((call, turn): ModelReply => {
      if (turn === 0) return { text: '', toolCalls: [{ id: 'a', name: 'remember', input: { statement: 'sub-agent was here' } }, { id: 'b', name: 'lcm_grep', input: { pattern: 'x' } }] };
      if (turn === 1) return callTool('lcm_expand', { summaryIds: [seedIds(call)[0]] });
      const last = lastExpansion(call);
      const child = last?.expansions[0]?.children[0]?.summaryId;
      if (child) return callTool('lcm_expand', { summaryIds: [child] });
      const leaf = toolResults(call).filter((r) => r.ok === true).at(-1) as { expansions: { summaryId: string }[] };
      return say(`They replaced the ollama endpoints with lmstudio ones [${leaf.expansions[0]!.summaryId}].`);
    });
    const s = await withModel(model);
    const deep = deepestSession(s);
    const top = queryRows(s.store.db, 'SELECT id FROM lcm_summaries WHERE session_id = ? ORDER BY depth DESC LIMIT 1', [deep.sessionId])[0]!.id as string;
    const r = await expandQuery(s, { prompt: 'How was lmstudio wired in?', summaryIds: [top], conversationId: deep.conversationId });

    for (const c of model.calls) expect(c.options.tools?.map((t) => t.name)).toEqual(['lcm_expand']);
    const refused = toolResults(model.calls[1]!);
    expect(refused).toEqual([
      { ok: false, reason: expect.stringContaining('only lcm_expand is available to this sub-agent; "remember" was not run') },
      { ok: false, reason: expect.stringContaining('"lcm_grep" was not run') },
    ]);
    expect(queryRows(s.store.db, "SELECT count(*) AS n FROM facts").at(0)?.n ?? 0).toBe(0);
    expect(JSON.stringify(queryRows(s.store.db, 'SELECT text FROM notes'))).not.toContain('sub-agent was here');

    const final = model.calls.at(-1)!;
    const leafExpansion = lastExpansion(final)!;
    expect(leafExpansion.expansions[0]!.messages.length).toBeGreaterThan(0);
    const leafId = (toolResults(final).filter((x) => x.ok === true).at(-1) as { expansions: { summaryId: string }[] }).expansions[0]!.summaryId;
    expect(r).toMatchObject({ ok: true, synthesizedBy: 'model:scripted', sourceConversationIds: [deep.conversationId], truncated: false });
    expect(r.answer).toContain(leafId);
    expect(r.citedIds).toEqual(expect.arrayContaining([top, leafId]));
    expect(r.expandedSummaryCount as number).toBeGreaterThanOrEqual(3);
    expect(r.totalSourceTokens as number).toBeGreaterThan(0);
    expect(s.lcm.grants.live).toBe(0);
    s.store.close();
  });

  it('scripted model: its grant covers only the conversation being expanded', async () => {
    let other = '';
    const model = new ScriptedModel((call, turn) => (turn === 0 ? callTool('lcm_expand', { summaryIds: [other] }) : say(JSON.stringify(toolResults(call)[0]))));
    const s = await withModel(model);
    const deep = deepestSession(s);
    other = queryRows(s.store.db, 'SELECT id FROM lcm_summaries WHERE session_id != ? LIMIT 1', [deep.sessionId])[0]!.id as string;
    const r = await expandQuery(s, { prompt: 'q', query: 'lmstudio', conversationId: deep.conversationId });
    expect(r.answer).toContain('lie outside the conversations this expansion may read');
    s.store.close();
  });

  // Timing-sensitive (a 0.4 s limit on a shared 2-core machine): it failed once in ~20 whole-folder
  // runs under load, and its error was not kept: a failure is retried (a real regression fails all three).
  it('scripted model: stops at the timeout, cleans up, and answers from excerpts instead', { retry: 2 }, async () => {
    const model = new ScriptedModel(() => new Promise<ModelReply>(() => undefined)); // never answers, ignores the signal
    const s = await withModel(model, { expandTimeoutMs: 400 });
    const deep = deepestSession(s);
    // The tokenizer's one-time start (up to ~2 s on a loaded machine) is not the agent's time limit.
    countTokens('warm the tokenizer');
    const started = Date.now();
    const r = await expandQuery(s, { prompt: 'How was lmstudio wired in?', query: 'lmstudio', conversationId: deep.conversationId });
    // The model never answers: only the 0.4 s limit ends this call. The bound leaves room for the
    // excerpt answer on a loaded 2-core machine (3 s failed once at load 4+), far below a hang.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(model.calls[0]!.signal.aborted).toBe(true);
    expect(s.lcm.grants.live).toBe(0);
    expect(r).toMatchObject({ ok: true, truncated: true, synthesizedBy: null, truncatedBecause: [expect.stringContaining('stopped at the 0.4 s time limit')] });
    expect(r.answer).toContain('No language model synthesised this answer');
    expect(r.citedIds!.length).toBeGreaterThan(0);
    s.store.close();
  });

  it('scripted model: stops at the token cap and asks once more for an answer without tools', async () => {
    const model = new ScriptedModel((call) => {
      if (!call.options.tools?.length) return say('What I could read, within budget [see cited ids].');
      const seen = [...new Set([...seedIds(call), ...toolResults(call).flatMap((r) => ((r.expansions as { children: { summaryId: string }[] }[] | undefined) ?? []).flatMap((e) => e.children.map((c) => c.summaryId)))])];
      return callTool('lcm_expand', { summaryIds: seen.slice(-8) });
    });
    const s = await withModel(model, { maxExpandTokens: 400, maxAgentTurns: 20 });
    const deep = deepestSession(s);
    const r = await expandQuery(s, { prompt: 'Everything about lmstudio', query: 'lmstudio', conversationId: deep.conversationId });
    const final = model.calls.at(-1)!;
    expect(final.options.tools).toEqual([]);
    expect(model.calls.length).toBeLessThan(20);
    const read = toolResults(final).reduce((n, x) => n + Number(x.totalTokens ?? 0), 0);
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThanOrEqual(400);
    expect(r).toMatchObject({ ok: true, synthesizedBy: 'model:scripted', answer: expect.stringContaining('within budget') });
    expect(s.lcm.grants.live).toBe(0);
    s.store.close();
  });

  it('scripted model: stops after its last turn', async () => {
    const model = new ScriptedModel((call) => (call.options.tools?.length ? callTool('lcm_expand', { summaryIds: seedIds(call).slice(0, 1), tokenCap: 5 }) : say('done')));
    const s = await withModel(model, { maxAgentTurns: 3 });
    const deep = deepestSession(s);
    const r = await expandQuery(s, { prompt: 'q', query: 'lmstudio', conversationId: deep.conversationId });
    expect(model.calls).toHaveLength(4);
    expect(model.calls.at(-1)!.messages.at(-1)!.content).toContain('That was the last of 3 turns');
    expect(r).toMatchObject({ ok: true, answer: 'done' });
    s.store.close();
  });

  it('scripted model: across conversations each of the top few gets its own run; the rest are reported skipped', async () => {
    const model = new ScriptedModel((call) => {
      if (call.messages[0]!.content.startsWith('Combine')) return say(`One answer from ${(call.messages[1]!.content.match(/## Conversation \d+/g) ?? []).length} conversations.`);
      return say(`From here: [${seedIds(call)[0] ?? 'none'}]`);
    });
    const s = await withModel(model);
    const r = await expandQuery(s, { prompt: 'what was done?', query: 'the', allConversations: true });
    const breakdown = r.conversationBreakdown as { conversationId: number; status: string }[];
    expect(breakdown.filter((b) => b.status === 'ok')).toHaveLength(3);
    expect(breakdown.some((b) => b.status === 'skipped')).toBe(true);
    const runs = model.calls.filter((c) => c.options.tools?.length);
    expect(new Set(runs.map((c) => c.messages[0]!.content.match(/conversation (\d+)/)![1])).size).toBe(3);
    // The per-conversation answers are merged into one by a last call without tools.
    expect(model.calls.at(-1)!.options.tools).toEqual([]);
    expect(r).toMatchObject({ ok: true, truncated: true, synthesizedBy: 'model:scripted', answer: 'One answer from 3 conversations.' });
    expect(r.citedIds!.length).toBeGreaterThan(0);
    s.store.close();
  });

  it('scripted model: a failing model falls back to excerpts and says why', async () => {
    const model = new ScriptedModel(() => {
      throw new Error('quota exceeded');
    });
    const s = await withModel(model);
    const deep = deepestSession(s);
    const r = await expandQuery(s, { prompt: 'lmstudio?', query: 'lmstudio', conversationId: deep.conversationId });
    expect(r).toMatchObject({ ok: true, truncated: true, synthesizedBy: null, truncatedBecause: [expect.stringContaining('quota exceeded')] });
    expect(r.answer).toContain('No language model synthesised');
    s.store.close();
  });
});

describe('summaries written by a model (scripted model)', () => {
  it('scripted model: records the producer, passes the previous summary, asks more abstractly per level, and keeps the footer', async () => {
    const model = new ScriptedModel((call) => say(`summary of ${call.messages.length} messages`));
    const s = await importedFixtures({ languageModel: model });
    const producers = new Set(queryRows(s.store.db, 'SELECT producer FROM lcm_summaries').map((r) => String(r.producer)));
    expect(producers).toEqual(new Set(['model:scripted']));
    for (const r of queryRows(s.store.db, 'SELECT content FROM lcm_summaries')) expect(String(r.content)).toMatch(/\nExpand for details about: /);
    expect(model.calls.every((c) => c.options.background === true && !c.options.tools)).toBe(true);
    expect(model.calls.some((c) => c.messages.some((m) => m.content.startsWith('For context only, the summary just before this part')))).toBe(true);
    const systems = new Set(model.calls.map((c) => c.messages[0]!.content.split('\n')[0]));
    expect(systems.size).toBeGreaterThanOrEqual(3);
    s.store.close();
  });

  it('scripted model: a model that fails leaves extractive summaries, so the DAG still exists', async () => {
    const model = new ScriptedModel(() => Promise.reject(new Error('offline')));
    const s = await importedFixtures({ languageModel: model });
    expect(model.calls.length).toBeGreaterThan(0);
    expect(new Set(queryRows(s.store.db, 'SELECT producer FROM lcm_summaries').map((r) => String(r.producer)))).toEqual(new Set(['extractive']));
    s.store.close();
  });
});
