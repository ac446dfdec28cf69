import { describe, expect, it } from 'vitest';
import { decisionModelOver } from '../../src/core/history/decisionModel';
import { WITHHOLD_MIN_CHARS, withholdUnrelated } from '../../src/core/history/withholding';
import { ModelUnavailableError } from '../../src/core/lcm/languageModel';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { writeClaudeSession, type Step } from './helpers/claudeTranscript';
import { connectMcp } from './helpers/mcpClient';
import { ScriptedModel, say, type ScriptedCall } from './helpers/scriptedModel';
import { openTemp, tempHome } from './helpers/tempStore';

const DEMO = '/work/demo';
const OTHER = '/work/other';
/** Tool output long enough to push a run past the 4,096-character threshold. */
const bulk = (topic: string) => `${topic} `.repeat(Math.ceil(5_000 / (topic.length + 1)));

const RUNS = {
  migration: [
    { user: 'Write the SQL migration that adds an invoices table to the billing database' },
    { tool: 'Bash', id: 'toolu_mig', input: { command: 'cat db/schema.sql' } },
    { result: bulk('CREATE TABLE billing_invoices'), id: 'toolu_mig' },
    { assistant: 'Added migration 0042_invoices.sql.' },
  ],
  loginEarlier: [
    { user: 'Why does the login form accept an empty password?' },
    { tool: 'Read', id: 'toolu_login', input: { file_path: 'src/login/form.ts' } },
    { result: bulk('function validateLogin(password)'), id: 'toolu_login' },
    { assistant: 'validateLogin never checks for an empty password.' },
  ],
  short: [{ user: 'What time zone is the CI server in?' }, { assistant: 'UTC.' }],
  current: [{ user: 'Fix the login form validation so an empty password is refused' }, { assistant: 'Looking at it.' }],
} satisfies Record<string, Step[]>;

interface Setup {
  s: Services;
  home: string;
  ids: { migration: string; loginEarlier: string; short: string; current: string };
}

async function setUp(home = tempHome('withhold')): Promise<Setup> {
  const s = await openTemp(home);
  const steps = [...RUNS.migration, ...RUNS.loginEarlier, ...RUNS.short, ...RUNS.current];
  await s.importer.importPaths([writeClaudeSession(tempHome('withhold-src'), '11111111-aaaa-4000-8000-000000000001', steps, DEMO)]);
  const list = (await call(s, { mode: 'list' })).runs as { task_id: string; objective: string }[];
  const id = (start: string) => list.find((r) => r.objective.startsWith(start))!.task_id;
  return { s, home, ids: { migration: id('Write the SQL'), loginEarlier: id('Why does the login'), short: id('What time zone'), current: id('Fix the login') } };
}

async function call(s: Services, input: object, workspace = DEMO) {
  return (await invokeTool(findTool('chat_history')!, input, s, { client: 'claude-code', workspace })) as Record<string, unknown>;
}

/** The task_ids the prompt asked about, so the script can answer for each. */
const askedIds = (c: ScriptedCall) => [...(c.messages[0]?.content ?? '').matchAll(/<run task_id="([^"]+)">/g)].map((m) => m[1]!);

/** A scripted model that judges by topic: runs about the billing database are unrelated to a login fix. */
function topicJudge(confidence = 0.92) {
  return new ScriptedModel((c) => {
    const prompt = c.messages[0]?.content ?? '';
    const runs = askedIds(c).map((id) => {
      const block = prompt.slice(prompt.indexOf(`<run task_id="${id}">`)).split('</run>')[0] ?? '';
      return { task_id: id, related: !block.includes('billing'), confidence };
    });
    return say('```json\n' + JSON.stringify({ runs }) + '\n```');
  });
}

function attach(s: Services, model: ScriptedModel) {
  s.decisionModel = decisionModelOver(model, () => 'the setting recollect.history.withholdUnrelatedRuns is off');
}

type Shown = { task_id: string; withheld?: true; objective?: string; note?: string; events?: unknown[] };

describe('chat_history withholds unrelated runs (scripted model standing in for a VS Code language model)', () => {
  it('scripted model: a long unrelated run becomes a one-line note with its objective; a related run stays; a short run and the current one are never judged', async () => {
    const { s, ids } = await setUp();
    const model = topicJudge();
    attach(s, model);
    const read = await call(s, { mode: 'read', task_id: [ids.migration, ids.loginEarlier, ids.short, ids.current] });

    expect(model.calls).toHaveLength(1);
    expect(askedIds(model.calls[0]!).sort()).toEqual([ids.migration, ids.loginEarlier].sort());
    const runs = read.runs as Shown[];
    expect(runs.map((r) => r.task_id)).toEqual([ids.migration, ids.loginEarlier, ids.short, ids.current]);
    const note = runs[0]!;
    expect(note).toMatchObject({ withheld: true, objective: 'Write the SQL migration that adds an invoices table to the billing database' });
    expect(note.events).toBeUndefined();
    expect(note.note).toContain('Write the SQL migration');
    expect(note.note).not.toMatch(/\n/);
    for (const kept of runs.slice(1)) expect(kept.withheld).toBeUndefined();
    expect(JSON.stringify(runs[1])).toContain('validateLogin');
    expect(read.withheld).toMatchObject({ checked: true, model: 'scripted', ids: [ids.migration], current_request: { task_id: ids.current } });
    expect((read.withheld as { judged: unknown[] }).judged).toEqual(
      expect.arrayContaining([{ task_id: ids.migration, related: false, confidence: 0.92 }, { task_id: ids.loginEarlier, related: true, confidence: 0.92 }]),
    );
    // The note is what the caller pays for: the answer's measured tokens shrink accordingly.
    expect(JSON.stringify(note).length).toBeLessThan(WITHHOLD_MIN_CHARS / 4);
  });

  it('scripted model: a verdict of unrelated below confidence 0.7 keeps the run', async () => {
    const { s, ids } = await setUp();
    const model = topicJudge(0.69);
    attach(s, model);
    const read = await call(s, { mode: 'read', task_id: ids.migration });
    expect(model.calls).toHaveLength(1);
    expect((read.runs as Shown[])[0]!.withheld).toBeUndefined();
    expect(read.withheld).toMatchObject({ checked: true, ids: [], judged: [{ task_id: ids.migration, related: false, confidence: 0.69 }] });
  });

  it('scripted model: a run is withheld at most once per session, across a restart, and again in another session', async () => {
    const { s, home, ids } = await setUp();
    const model = topicJudge();
    attach(s, model);
    expect(((await call(s, { mode: 'read', task_id: ids.migration })).runs as Shown[])[0]!.withheld).toBe(true);
    const again = await call(s, { mode: 'read', task_id: ids.migration });
    expect((again.runs as Shown[])[0]!.withheld).toBeUndefined();
    expect(again.withheld).toMatchObject({ checked: true, ids: [], already_withheld: [ids.migration] });
    expect(model.calls).toHaveLength(1); // already withheld once: not even judged again

    s.store.close();
    const reopened = await openTemp(home);
    attach(reopened, model);
    expect(((await call(reopened, { mode: 'read', task_id: ids.migration })).runs as Shown[])[0]!.withheld).toBeUndefined();
    expect(queryRows(reopened.store.db, 'SELECT run_id FROM withheld_runs')).toEqual([{ run_id: ids.migration }]);

    // Another chat session (another workspace) has not seen the note yet.
    await reopened.importer.importPaths([writeClaudeSession(tempHome('withhold-other'), '22222222-bbbb-4000-8000-000000000002', RUNS.current, OTHER, Date.UTC(2025, 9, 2))]);
    const elsewhere = await call(reopened, { mode: 'read', task_id: ids.migration }, OTHER);
    expect((elsewhere.runs as Shown[])[0]!.withheld).toBe(true);
  });

  it.each([
    ['prose instead of JSON', say('The first run is about databases, so it is unrelated.'), /no complete JSON object/],
    ['a cut-off answer', say('{"runs": [{"task_id": "x", "related": false,'), /no complete JSON object/],
    ['broken JSON', say('{"runs": [{"task_id": "ID", "related": false, "confidence": 0.9,}]}'), /not valid JSON/],
    ['a confidence outside 0..1', say('{"runs":[{"task_id":"ID","related":false,"confidence":1.5}]}'), /wrong shape/],
  ])('scripted model: a malformed answer (%s) withholds nothing and says the judgement failed', async (_label, reply, why) => {
    const { s, ids } = await setUp();
    const model = new ScriptedModel(() => ({ ...reply, text: reply.text.replace('ID', ids.migration) }));
    attach(s, model);
    const read = await call(s, { mode: 'read', task_id: [ids.migration, ids.loginEarlier] });
    expect(model.calls).toHaveLength(1);
    expect((read.runs as Shown[]).every((r) => r.withheld === undefined && Array.isArray(r.events))).toBe(true);
    expect(read.withheld).toMatchObject({ checked: false, judgement_failed: true });
    expect(String((read.withheld as { reason: string }).reason)).toMatch(why);
    expect(queryRows(s.store.db, 'SELECT count(*) AS n FROM withheld_runs')[0]!.n).toBe(0);
  });

  it('scripted model: a model call that throws, or is declined at the consent prompt, withholds nothing and says why', async () => {
    const { s, ids } = await setUp();
    attach(s, new ScriptedModel(() => Promise.reject(new ModelUnavailableError('the person has not allowed a language model'))));
    const read = await call(s, { mode: 'read', task_id: ids.migration });
    expect((read.runs as Shown[])[0]!.withheld).toBeUndefined();
    expect(read.withheld).toMatchObject({ checked: false, judgement_failed: true });
    expect(String((read.withheld as { reason: string }).reason)).toContain('has not allowed');
  });

  it('scripted model that never answers: the read is not held up past the time limit and nothing is withheld', async () => {
    const { s, ids } = await setUp();
    const model = new ScriptedModel(() => new Promise(() => undefined));
    const run = s.history.readRun(ids.migration)!;
    const session = s.history.currentSession({ client: 'claude-code', workspace: DEMO });
    const shown = await withholdUnrelated({ store: s.store, model: decisionModelOver(model, () => 'off'), session, timeoutMs: 50 }, [run]);
    expect(shown.runs).toEqual([run]);
    expect(shown.report).toMatchObject({ checked: false, judgement_failed: true, reason: expect.stringContaining('no answer within') });
    expect(model.calls[0]!.signal.aborted).toBe(true);
  });

  it('without a decision model (CLI, MCP, setting off) nothing is withheld and the answer says why', async () => {
    const { s, ids } = await setUp();
    const none = await call(s, { mode: 'read', task_id: ids.migration });
    expect((none.runs as Shown[])[0]!.withheld).toBeUndefined();
    expect(none.withheld).toEqual({ checked: false, reason: expect.stringMatching(/no decision model/) });

    const model = topicJudge();
    model.on = false; // the host's setting is off
    attach(s, model);
    const off = await call(s, { mode: 'read', task_id: ids.migration });
    expect(model.calls).toHaveLength(0);
    expect((off.runs as Shown[])[0]!.withheld).toBeUndefined();
    expect(String((off.withheld as { reason: string }).reason)).toContain('recollect.history.withholdUnrelatedRuns is off');
  });

  it('the real MCP server has no decision model: a long run comes back in full and the answer says why', async () => {
    const { s, home, ids } = await setUp();
    s.store.close();
    const mcp = await connectMcp(home, 'claude-code');
    try {
      const read = await mcp.call('chat_history', { mode: 'read', task_id: ids.migration });
      expect(JSON.stringify((read.runs as Shown[])[0])).toContain('billing_invoices');
      expect(read.withheld).toEqual({ checked: false, reason: expect.stringMatching(/no decision model/) });
    } finally {
      await mcp.close();
    }
  });
});
