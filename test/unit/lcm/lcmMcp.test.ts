import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, connectMcp } from '../helpers/mcpClient';
import { transcriptFixtures } from '../helpers/fixtures';
import { tempHome } from '../helpers/tempStore';

describe('lcm tools over the CLI and MCP (real processes)', () => {
  it('`recollect import` builds the DAG; MCP lists all four lcm tools, greps them and refuses lcm_expand', async () => {
    const home = tempHome('lcm-mcp');
    const imported = spawnSync(process.execPath, [CLI, 'import', transcriptFixtures()], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
    expect(imported.status, imported.stderr).toBe(0);
    const report = JSON.parse(imported.stdout) as { events: number; summaries: { leaves: number; sessions: number } };
    expect(report.events).toBeGreaterThan(100);
    expect(report.summaries.leaves).toBeGreaterThan(0);

    const mcp = await connectMcp(home, 'claude-code');
    try {
      const { tools } = await mcp.client.listTools();
      const lcm = tools.filter((t) => t.name.startsWith('lcm_'));
      expect(lcm.map((t) => t.name).sort()).toEqual(['lcm_describe', 'lcm_expand', 'lcm_expand_query', 'lcm_grep']);
      // The sub-agent-only tool is listed so the contract is visible, and says who may use it.
      expect(lcm.find((t) => t.name === 'lcm_expand')?.description).toContain('ONLY for the sub-agent');

      const found = await mcp.call('lcm_grep', { pattern: 'lmstudio', allConversations: true, scope: 'summaries' });
      expect(found).toMatchObject({ ok: true, matches: expect.arrayContaining([expect.objectContaining({ type: 'summary', summaryId: expect.stringMatching(/^sum_[0-9a-f]{16}$/) })]) });
      const id = (found.matches as { id: string }[])[0]!.id;
      expect(await mcp.call('lcm_describe', { id, allConversations: true })).toMatchObject({ ok: true, type: 'summary', id });

      const refused = await mcp.client.callTool({ name: 'lcm_expand', arguments: { summaryIds: [id] } });
      expect(refused.isError).toBe(true);
      expect(JSON.parse((refused.content as { text: string }[])[0]!.text)).toMatchObject({ ok: false, reason: expect.stringContaining('Use lcm_expand_query') });

      const answered = await mcp.call('lcm_expand_query', { prompt: 'what about lmstudio?', query: 'lmstudio', allConversations: true });
      expect(answered).toMatchObject({ ok: true, synthesizedBy: null, answer: expect.stringContaining('No language model synthesised'), conversationBreakdown: expect.any(Array) });
    } finally {
      await mcp.close();
    }
  });
});
