import * as vscode from 'vscode';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { SESSION_ID, type HistoryHandlers, type HistoryHostMessage } from '../../webview/shared/historyProtocol';
import { answerHistoryMessage, historyViewHandlers, type DoorCommandResult, type HistoryPorts } from './historyViewHandlers';
import { renderWebview } from './webviewHtml';

export const HISTORY_VIEW_TYPE = 'recollect.sessionHistory';
const TITLE = 'Session History';

type Target = { sessionId?: string; seq?: number };

/**
 * The session-history panel: one at a time, opened by recollect.openSessionHistory (optionally
 * on a session and row) and brought back by VS Code after a reload. The page keeps its own
 * state (vscode.setState), so it is not kept alive while hidden.
 */
export function registerSessionHistory(context: vscode.ExtensionContext, services: Promise<RemoteServices>): vscode.Disposable[] {
  let panel: vscode.WebviewPanel | undefined;
  let opening: Target = {};
  const ports: HistoryPorts = {
    runDoor: (intent, args) => Promise.resolve(vscode.commands.executeCommand<DoorCommandResult | undefined>(intent === 'continue' ? 'recollect.continueWithChapters' : 'recollect.forkWithChapters', args)),
    openExternal: (url) => Promise.resolve(vscode.env.openExternal(vscode.Uri.parse(url, true))),
    takeOpening() {
      const target = opening;
      opening = {};
      return target;
    },
  };
  const handlers: Promise<HistoryHandlers> = services.then((s) => historyViewHandlers(s, ports));
  // A store that failed to open is reported by the container; requests answer with the reason.
  handlers.catch(() => undefined);

  const attach = (p: vscode.WebviewPanel) => {
    panel = p;
    p.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'recollect.svg');
    renderWebview(p.webview, context.extensionUri, 'history', TITLE);
    const post = (msg: HistoryHostMessage) => void p.webview.postMessage(msg);
    const sub = p.webview.onDidReceiveMessage((raw: unknown) => void answerHistoryMessage(raw, handlers).then((reply) => reply && post(reply)));
    p.onDidDispose(() => {
      sub.dispose();
      if (panel === p) panel = undefined;
    });
  };

  const open = (arg: unknown) => {
    const target = parseTarget(arg);
    if (panel) {
      // A live page is told; a hidden one was discarded and asks what it is for when it loads again.
      if (panel.visible && target.sessionId) void panel.webview.postMessage({ type: 'reveal', sessionId: target.sessionId, ...(target.seq ? { seq: target.seq } : {}) } satisfies HistoryHostMessage);
      else opening = target;
      panel.reveal();
      return { opened: true };
    }
    opening = target;
    attach(vscode.window.createWebviewPanel(HISTORY_VIEW_TYPE, TITLE, vscode.ViewColumn.Active, { enableScripts: true, retainContextWhenHidden: false }));
    return { opened: true };
  };

  return [
    vscode.commands.registerCommand('recollect.openSessionHistory', open),
    vscode.window.registerWebviewPanelSerializer(HISTORY_VIEW_TYPE, {
      deserializeWebviewPanel(p) {
        attach(p);
        return Promise.resolve();
      },
    }),
  ];
}

/** Command arguments come from anywhere (keybindings, other extensions): checked, never trusted. */
function parseTarget(arg: unknown): Target {
  if (typeof arg !== 'object' || arg === null) return {};
  const { sessionId, seq } = arg as Record<string, unknown>;
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) return {};
  return { sessionId, ...(typeof seq === 'number' && Number.isInteger(seq) && seq >= 1 ? { seq } : {}) };
}
