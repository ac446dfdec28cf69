import { describe, expect, it } from 'vitest';
import { parseTimeRange, TIME_RANGE_FORMS } from '../../src/core/text/time';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp } from './helpers/tempStore';

const NOW = Date.parse('2026-03-31T12:00:00Z');

describe('chat_history time_range', () => {
  it("reads Agenvoy's 1d/7d/1m/1y beside hours, weeks and minutes, months and years on the calendar", () => {
    expect(parseTimeRange('1d', NOW)).toEqual({ since: NOW - 86_400_000 });
    expect(parseTimeRange('7d', NOW)).toEqual({ since: NOW - 7 * 86_400_000 });
    expect(parseTimeRange('2w', NOW)).toEqual({ since: NOW - 14 * 86_400_000 });
    expect(parseTimeRange('24h', NOW)).toEqual({ since: NOW - 86_400_000 });
    expect(parseTimeRange('30min', NOW)).toEqual({ since: NOW - 30 * 60_000 });
    // 31 March minus one calendar month is 3 March (February has 28 days), not 1 March.
    expect(parseTimeRange('1m', NOW)).toEqual({ since: Date.parse('2026-03-03T12:00:00Z') });
    expect(parseTimeRange('1y', NOW)).toEqual({ since: Date.parse('2025-03-31T12:00:00Z') });
    expect(parseTimeRange('all', NOW)).toEqual({});
    expect(parseTimeRange('2026-01-01..', NOW)).toEqual({ since: Date.parse('2026-01-01') });
    expect(parseTimeRange('1 fortnight', NOW)).toBeUndefined();
  });

  it('accepts 1y through the tool, and a refusal lists every accepted form', async () => {
    const s = await openTemp();
    try {
      await s.importer.importPaths([transcriptFixtures()]);
      const tool = findTool('chat_history')!;
      const year = (await invokeTool(tool, { mode: 'search', query: 'the', time_range: '1y' }, s, { client: 'claude-code' })) as Record<string, unknown>;
      expect(year.ok).not.toBe(false);
      const refused = (await invokeTool(tool, { mode: 'list', time_range: 'yesterday-ish' }, s, { client: 'claude-code' })) as { ok: boolean; reason: string };
      expect(refused.ok).toBe(false);
      expect(refused.reason).toContain(TIME_RANGE_FORMS);
      for (const form of ['"<N>min"', '"2w"', '"1m"', '"1y"', '"all"', '"<ISO>..<ISO>"']) expect(refused.reason).toContain(form);
    } finally {
      s.store.close();
    }
  });
});
