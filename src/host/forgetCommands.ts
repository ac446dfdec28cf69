import * as vscode from 'vscode';
import type { ForgetScope } from '../core/history/forgetOps';
import type { ForgetReport } from '../core/history/forgetService';
import { isRefusal } from '../core/refusal';
import type { RemoteServices } from '../core/owner/serviceProxy';

interface ForgetDeps {
  services: Promise<RemoteServices>;
  log: vscode.LogOutputChannel;
}

/** How many sessions a confirmation names before it says "and N more". */
const LISTED = 6;

/**
 * "Recollect: Forget Session…", "Forget Workspace History…", "Forget History Before…".
 * Forgetting is a person's act: these commands and `recollect forget` are the only ways to it; no
 * language-model or MCP tool offers it. Each asks in a modal naming what goes. A hidden argument
 * (for the end-to-end tests and the history panel) names the target; the modal still asks.
 */
export function forgetCommands(deps: ForgetDeps): Record<string, (arg?: unknown) => unknown> {
  return {
    'recollect.forgetSession': async (arg?: unknown) => {
      const services = await deps.services;
      const id = typeof arg === 'string' ? arg : await pickSession(services);
      return id === undefined ? undefined : confirmAndForget(deps, services, { session: id });
    },
    'recollect.forgetWorkspace': async (arg?: unknown) => {
      const services = await deps.services;
      const folder = typeof arg === 'string' ? arg : await pickWorkspace(services);
      return folder === undefined ? undefined : confirmAndForget(deps, services, { workspace: folder });
    },
    'recollect.forgetBefore': async (arg?: unknown) => {
      const services = await deps.services;
      const text = typeof arg === 'string' ? arg : await vscode.window.showInputBox({
        title: 'Recollect: forget every imported session last active before…',
        prompt: 'A date (YYYY-MM-DD) or an ISO time. Sessions with a later message stay whole.',
        placeHolder: new Date(Date.now() - 90 * 86_400_000).toISOString().slice(0, 10),
        validateInput: (v) => (Number.isFinite(Date.parse(v)) ? undefined : 'not a date: write it as YYYY-MM-DD'),
      });
      if (text === undefined) return undefined;
      const before = Date.parse(text);
      if (!Number.isFinite(before)) return undefined;
      return confirmAndForget(deps, services, { before });
    },
  };
}

async function pickSession(services: RemoteServices): Promise<string | undefined> {
  const { sessions } = await services.sessions.list({ limit: 500 });
  const picked = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.title ?? s.id, description: `${s.source}${s.workspace ? ` · ${s.workspace}` : ''}`, detail: s.updatedAt ?? undefined, id: s.id })),
    { title: 'Recollect: forget which imported session?', matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.id;
}

async function pickWorkspace(services: RemoteServices): Promise<string | undefined> {
  const known = (await services.sessions.facets()).workspaces;
  const open = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const items = [...new Set([...open, ...known.map((w) => w.name)])].map((name) => ({
    label: name,
    description: `${known.find((w) => w.name === name)?.sessions ?? 0} sessions${open.includes(name) ? ' · open in this window' : ''}`,
  }));
  const picked = await vscode.window.showQuickPick(items, { title: 'Recollect: forget the history of which workspace (and the folders inside it)?' });
  return picked?.label;
}

async function confirmAndForget(deps: ForgetDeps, services: RemoteServices, scope: ForgetScope): Promise<ForgetReport | undefined> {
  const sessions = await services.forget.preview(scope);
  if (!sessions.length) {
    void vscode.window.showInformationMessage(`Recollect: no imported session matches ${describeScope(scope)}; nothing was forgotten.`);
    return undefined;
  }
  const named = sessions.slice(0, LISTED).map((s) => `• ${s.title ?? s.id} (${s.source})`).join('\n');
  const more = sessions.length > LISTED ? `\n…and ${sessions.length - LISTED} more` : '';
  const answer = await vscode.window.showWarningMessage(
    `Forget ${sessions.length} imported session${sessions.length === 1 ? '' : 's'} (${describeScope(scope)})?`,
    {
      modal: true,
      detail: `${named}${more}\n\nTheir messages, tool outputs, summaries and chapters are deleted from Recollect's store in every window and agent, and from its files on disk. The transcripts themselves are not touched, and Recollect will not import these sessions again (\`recollect forget --remember <id>\` undoes that).`,
    },
    'Forget',
  );
  if (answer !== 'Forget') return undefined;
  const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Recollect: forgetting…' }, () => services.forget.forget(scope));
  if (isRefusal(report)) {
    void vscode.window.showWarningMessage(`Recollect: ${report.reason}`);
    return undefined;
  }
  deps.log.info(`forget ${describeScope(scope)}: ${report.sessions.length} sessions, ${report.events} events, ${report.summaries} summaries, ${report.chapters} chapters, ${report.blobs_deleted} blob files; journal lines rewritten: ${report.journal.segment_lines} sealed, ${report.journal.live_lines} live`);
  for (const w of report.warnings) deps.log.warn(`forget: ${w}`);
  const warned = report.warnings.length ? ` ${report.warnings.length} things could not be purged from disk (see the log).` : '';
  void vscode.window.showInformationMessage(`Recollect forgot ${report.sessions.length} session${report.sessions.length === 1 ? '' : 's'} (${report.events} events).${warned}`);
  return report;
}

function describeScope(scope: ForgetScope): string {
  if ('session' in scope) return `session ${scope.session}`;
  if ('workspace' in scope) return `workspace ${scope.workspace}`;
  return `last active before ${new Date(scope.before).toISOString().slice(0, 10)}`;
}
