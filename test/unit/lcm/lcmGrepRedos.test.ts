import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GREP_OPTIONS, LcmGrep, type GrepRequest } from '../../../src/core/lcm/lcmGrep';
import { writeClaudeSession } from '../helpers/claudeTranscript';
import { CLI, connectMcp } from '../helpers/mcpClient';
import { tempHome } from '../helpers/tempStore';
import { REDOS_CASES } from './grepReference';
import { openLcm } from './lcmFixture';

/** Texts that provoke backtracking, as the messages of one imported session. */
function hostileSession(dir: string): void {
  const texts = [...new Set(REDOS_CASES.map(([, text]) => text))];
  writeClaudeSession(dir, '0d6c1e4a-5b7f-4c2e-9a31-7e8f00000001', texts.flatMap((t, i) => [{ user: t }, { assistant: `reply ${i}: ${t}` }]));
}

describe('lcm_grep on patterns that backtrack catastrophically (issue 21, item 6)', () => {
  it('answers each of the 14 patterns in bounded time over MCP while memory_status is answered beside it', async () => {
    const home = tempHome('redos');
    const sessions = path.join(home, 'transcripts');
    hostileSession(sessions);
    const imported = spawnSync(process.execPath, [CLI, 'import', sessions], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
    expect(imported.status, imported.stderr).toBe(0);
    const mcp = await connectMcp(home, 'claude-code');
    try {
      for (const [pattern] of REDOS_CASES) {
        const t0 = performance.now();
        const grep = mcp.call('lcm_grep', { pattern, allConversations: true, scope: 'messages', sort: 'relevance' });
        const status = mcp.call('memory_status', {});
        const statusAt = await status.then((r) => ({ r, ms: performance.now() - t0 }));
        const found = await grep;
        const ms = performance.now() - t0;
        expect(statusAt.r, pattern).toMatchObject({ ok: true });
        // Bounds for two busy shared cores; JavaScript's engine took more than 30 s on several of these.
        expect(statusAt.ms, pattern).toBeLessThan(5000);
        expect(ms, pattern).toBeLessThan(10_000);
        expect(found, pattern).toMatchObject({ ok: true });
        expect(found.stopped, pattern).toBeUndefined();
      }
      // Where the answer is known: the user's message and its echo end in a run of a's and a "!".
      const all = await mcp.call('lcm_grep', { pattern: 'a{1000}!', allConversations: true, scope: 'messages', limit: 200 });
      expect(all).toMatchObject({ ok: true, count: 2 });
    } finally {
      await mcp.close();
    }
  }, 180_000);

  it('stops at its time bound, says so with the measured time, and gives the event loop turns meanwhile', async () => {
    const s = await openLcm();
    try {
      const dir = path.join(tempHome('redos-bound'), 'transcripts');
      hostileSession(dir);
      await s.importer.importPaths([dir]);
      const req: GrepRequest = { pattern: 'a', mode: 'regex', scope: 'messages', limit: 200, sort: 'relevance' };
      const all = { all: true as const, how: 'all conversations' };
      const bounded = await new LcmGrep(s.store, { ...DEFAULT_GREP_OPTIONS, timeBoundMs: 0, sliceMs: 0 }).grep(req, all);
      expect(bounded).toMatchObject({ ok: true, truncated: true, stopped: { timeBoundMs: 0, afterMs: expect.any(Number), reason: expect.stringContaining('time bound in messages') } });
      let turns = 0;
      const ticker = setInterval(() => turns++, 0);
      const whole = await new LcmGrep(s.store, { ...DEFAULT_GREP_OPTIONS, sliceMs: 0 }).grep(req, all);
      clearInterval(ticker);
      expect(whole).toMatchObject({ ok: true, count: 6 });
      expect(whole).not.toHaveProperty('stopped');
      expect(turns).toBeGreaterThan(0);
    } finally {
      s.store.close();
    }
  });
});
