import * as os from 'node:os';
import * as vscode from 'vscode';
import type { RuleView } from '../core/rules/rulesService';
import type { RemoteServices } from '../core/owner/serviceProxy';
import type { Services } from '../core/services';
import type { RulesHandlers, RulesHostMessage } from '../../webview/shared/rulesProtocol';
import { answerRulesMessage, rulesViewHandlers, type RulesPorts } from './rulesViewHandlers';
import { renderWebview } from './webviewHtml';

export const RULES_VIEW_TYPE = 'recollect.rules';
const TITLE = 'Rule Approval';
/** Models propose rules from other processes (the MCP server, the CLI); a visible panel looks now and then. */
const POLL_MS = 4_000;

/**
 * The rule-approval panel (recollect.reviewRules). A rule is put in force only here: the page
 * sends a rule id, the host shows the rule as stored in a modal dialog, and only the person's
 * "Approve" there records the approval for this machine (vscode.env.machineId). The command
 * takes no arguments, and no tool or MCP call reaches the approve path.
 */
export function registerRulesReview(context: vscode.ExtensionContext, services: Promise<RemoteServices>, whenOwner: (fn: (s: Services) => void) => void, onDecided: () => void): vscode.Disposable[] {
  let panel: vscode.WebviewPanel | undefined;
  const ports: RulesPorts = { machineId: vscode.env.machineId, approver: approverName(), confirmApproval, decided: onDecided };
  // Status "on this machine" is judged by the ids the store's owner knows this machine by; VS Code's is one of them.
  whenOwner((s) => s.rules.machine.adopt(vscode.env.machineId));
  const handlers: Promise<RulesHandlers> = services.then((s) => rulesViewHandlers(s, ports));
  handlers.catch(() => undefined);

  const attach = (p: vscode.WebviewPanel) => {
    panel = p;
    p.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'recollect.svg');
    renderWebview(p.webview, context.extensionUri, 'rules', TITLE);
    const post = (msg: RulesHostMessage) => void p.webview.postMessage(msg);
    let seen: string | undefined;
    const look = async () => {
      if (!p.visible) return;
      const now = await signature(await services);
      if (seen !== undefined && now !== seen) post({ type: 'changed' });
      seen = now;
    };
    const timer = setInterval(() => void look().catch(() => undefined), POLL_MS);
    const subs = [
      p.webview.onDidReceiveMessage((raw: unknown) => void answerRulesMessage(raw, handlers).then((reply) => reply && post(reply))),
      p.onDidChangeViewState(() => void look().catch(() => undefined)),
    ];
    p.onDidDispose(() => {
      clearInterval(timer);
      for (const s of subs) s.dispose();
      if (panel === p) panel = undefined;
    });
  };

  return [
    // Arguments are ignored on purpose: nothing passed to a command can decide a rule.
    vscode.commands.registerCommand('recollect.reviewRules', () => {
      if (panel) panel.reveal();
      else attach(vscode.window.createWebviewPanel(RULES_VIEW_TYPE, TITLE, vscode.ViewColumn.Active, { enableScripts: true, retainContextWhenHidden: false }));
    }),
    vscode.window.registerWebviewPanelSerializer(RULES_VIEW_TYPE, {
      deserializeWebviewPanel(p) {
        attach(p);
        return Promise.resolve();
      },
    }),
  ];
}

async function confirmApproval(rule: RuleView): Promise<boolean> {
  const where = rule.scope === 'project' ? `project ${rule.target}` : `session ${rule.target}`;
  const detail = [
    `“${rule.text}”`,
    '',
    `For ${where} · ${rule.category} · proposed by ${rule.proposedBy} on ${rule.proposedAt}`,
    ...(rule.rationale ? [`Why: ${rule.rationale}`] : []),
    '',
    'Once approved on this machine, agents working here receive it from chapters_rules and follow it.',
  ].join('\n');
  const pick = await vscode.window.showWarningMessage('Approve this rule on this machine?', { modal: true, detail }, 'Approve');
  return pick === 'Approve';
}

/** Who approved, as the person is known on this computer. */
function approverName(): string {
  try {
    return os.userInfo().username || 'a person in VS Code';
  } catch {
    return 'a person in VS Code';
  }
}

async function signature(s: RemoteServices): Promise<string> {
  return (await s.rules.list()).map((r) => `${r.id}:${r.status}`).join(',');
}
