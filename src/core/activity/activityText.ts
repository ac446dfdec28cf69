import type { ActivityPage } from './activityLog';

/** The activity log as a person reads it: one line per call, newest first, aligned where it helps. */
export function activityText(page: ActivityPage, home: string): string {
  const header = `Recollect's own tool calls on ${home}, newest first (${page.rows.length} of ${page.total} shown)`;
  if (!page.rows.length) return `${header}\n\nNo tool call has been recorded yet.\n`;
  const client = Math.max(...page.rows.map((r) => r.client.length));
  const tool = Math.max(...page.rows.map((r) => r.tool.length));
  const lines = page.rows.map((r) =>
    [r.at, r.client.padEnd(client), r.tool.padEnd(tool), (r.ok ? 'ok' : 'refused').padEnd(7), `${r.ms} ms`.padStart(8), `${r.input} → ${r.result}`].join('  '),
  );
  const torn = page.unreadable ? `\n${page.unreadable} line${page.unreadable === 1 ? '' : 's'} could not be read (a write cut short by a crash).\n` : '';
  return `${header}\n\n${lines.join('\n')}\n${torn}`;
}
