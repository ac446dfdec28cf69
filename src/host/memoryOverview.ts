import type { RemoteServices } from '../core/owner/serviceProxy';
import type { AgentRequest, Overview, RuleSummary } from '../../webview/shared/protocol';

// No `vscode` here: the webview tests answer a real Chromium page with this same mapping.

/** Rows per section: a glance, not an archive. Each section says how many there are in all. */
export const SECTION_ROWS = 25;

/**
 * The memory browser's sections, read from the same services the tools use (error memory,
 * rules, requests, imported history, the vault and the fact ledger) and mapped onto the view's
 * own wire types, so the webview bundle never depends on engine code.
 */
export async function memoryOverview(services: RemoteServices, rows = SECTION_ROWS): Promise<Overview> {
  const [errors, rules, requests, sessions, log, activity, notes, entities, retired] = await Promise.all([
    services.errors.recent(rows),
    services.rules.list(),
    services.browse.requests(rows),
    services.sessions.list({ limit: rows }),
    services.browse.dailyLog(rows),
    services.activity.recent(rows),
    services.browse.vaultNotes(rows),
    services.browse.entities(rows),
    services.browse.retired(rows),
  ]);
  const runs = await services.sessions.runCounts(sessions.sessions.map((s) => s.id));
  return {
    errors: {
      items: errors.records.map((r) => ({
        hash: r.hash, tool_name: r.tool_name, keywords: r.keywords, symptom: r.symptom, cause: r.cause, action: r.action,
        source: r.source, scope: r.scope, last_recorded_at: r.last_recorded_at, times_recorded: r.times_recorded,
      })),
      total: errors.total,
    },
    rules: {
      // Pending first: those are the ones waiting on a person.
      items: [...rules].sort((a, b) => Number(b.status === 'pending') - Number(a.status === 'pending')).slice(0, rows).map(
        (r): RuleSummary => ({ id: r.id, text: r.text, status: r.status, scope: r.scope, target: r.target, category: r.category, proposedBy: r.proposedBy, proposedAt: r.proposedAt }),
      ),
      total: rules.length,
      pending: rules.filter((r) => r.status === 'pending').length,
    },
    requests: {
      items: requests.requests.map(
        (r): AgentRequest => ({
          id: r.id, from: r.from, to: r.to, status: r.status, scope: r.scope, asked_at: r.asked_at,
          request: r.request.text, ...(r.request.full_chars !== undefined ? { request_chars: r.request.full_chars } : {}),
          answer: r.answer?.text ?? null, answered_at: r.answered_at, closed_at: r.closed_at,
        }),
      ),
      total: requests.counts.open + requests.counts.answered + requests.counts.closed,
      counts: requests.counts,
    },
    sessions: {
      items: sessions.sessions.map((s) => ({ id: s.id, source: s.source, title: s.title, workspace: s.workspace, updatedAt: s.updatedAt ?? s.startedAt, runs: runs[s.id] ?? 0, events: s.events })),
      total: sessions.total,
    },
    log: { items: log.items.map((e) => ({ id: e.id, day: e.day, text: e.text, scope: e.scope, source: e.source, created_at: e.created_at, path: e.path })), total: log.total },
    notes,
    entities,
    retired,
    activity: { items: activity.rows, total: activity.total },
  };
}
