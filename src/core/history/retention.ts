import type { SourceSwitch } from './locations';
import type { HistorySource } from './parsedSession';

/** `recollect.history.retention.toolOutputDays`: per source switch, days raw tool outputs are kept; 0 or absent keeps them for ever. */
export type ToolOutputRetention = Partial<Record<SourceSwitch, number>>;

const SOURCES_OF: Record<SourceSwitch, HistorySource[]> = {
  vscode: ['vscode-chat', 'copilot-transcript'],
  claudeCode: ['claude-code'],
  codex: ['codex'],
  copilotCli: ['copilot-cli'],
};

const DAY_MS = 86_400_000;

/**
 * What to drop now: one cut-off per distinct number of days, with the sources it applies to.
 * Cut-offs fall on a UTC midnight, so every run within a day asks for the same thing and finds
 * nothing left to drop after the first: retention writes at most once a day per setting.
 */
export function retentionCuts(setting: ToolOutputRetention, now: number): { before: number; sources: HistorySource[] }[] {
  const byDays = new Map<number, HistorySource[]>();
  for (const [name, days] of Object.entries(setting) as [SourceSwitch, number | undefined][]) {
    if (!SOURCES_OF[name] || typeof days !== 'number' || !Number.isFinite(days) || days <= 0) continue;
    const whole = Math.ceil(days);
    byDays.set(whole, [...(byDays.get(whole) ?? []), ...SOURCES_OF[name]]);
  }
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return [...byDays].sort(([a], [b]) => a - b).map(([days, sources]) => ({ before: today - days * DAY_MS, sources }));
}
