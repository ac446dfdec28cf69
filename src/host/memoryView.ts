import * as vscode from 'vscode';
import { vaultRoot } from '../core/memory/vault/vaultLayout';
import type { RemoteServices } from '../core/owner/serviceProxy';
import type { HostMessage, RequestHandlers } from '../../webview/shared/protocol';
import type { MemoryViewPorts } from './memoryViewActions';
import { answerWebviewMessage, memoryViewHandlers } from './memoryViewHandlers';
import { renderWebview } from './webviewHtml';

export const MEMORY_VIEW_ID = 'recollect.memory';

/**
 * Other processes (the MCP server, the CLI, another window) write to the same store, so a
 * visible view looks for changes now and then. A look is a few counts (MemoryBrowse.browseVersion), asked of the store's owner.
 */
const POLL_MS = 4_000;

/** The sidebar memory browser: a webview answered by the vscode-free handlers. */
export function registerMemoryView(context: vscode.ExtensionContext, services: Promise<RemoteServices>, home: string): vscode.Disposable {
  const ports: MemoryViewPorts = {
    confirm: async (message, detail, action) => (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action,
    openFile: async (file) => void (await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false })),
    openSession: async (sessionId) => void (await vscode.commands.executeCommand('recollect.openSessionHistory', { sessionId })),
    openRules: async () => void (await vscode.commands.executeCommand('recollect.reviewRules')),
    vaultRoot: vaultRoot(home),
  };
  const ready = services.then((s) => ({ version: () => s.browse.browseVersion(), handlers: memoryViewHandlers(s, ports) }));
  const handlers: Promise<RequestHandlers> = ready.then((r) => r.handlers);
  // A store that failed to open is reported by the container; requests answer with the reason.
  // These catches only keep the rejection from also surfacing as an unhandled one.
  ready.catch(() => undefined);
  handlers.catch(() => undefined);

  const provider: vscode.WebviewViewProvider = {
    resolveWebviewView(view) {
      renderWebview(view.webview, context.extensionUri, 'memory', 'Recollect Memory');
      const post = (msg: HostMessage) => void view.webview.postMessage(msg);
      let seen: string | undefined;
      let timer: NodeJS.Timeout | undefined;

      const look = async () => {
        const version = await (await ready).version();
        if (seen !== undefined && version !== seen) post({ type: 'changed' });
        seen = version;
      };
      const lookQuietly = () => void look().catch(() => undefined);
      // Polls only while visible; on being shown again one look tells whether hidden time missed writes.
      const follow = () => {
        clearInterval(timer);
        timer = undefined;
        if (!view.visible) return;
        lookQuietly();
        timer = setInterval(lookQuietly, POLL_MS);
      };
      follow();

      const subs = [
        view.webview.onDidReceiveMessage((raw: unknown) => {
          void answerWebviewMessage(raw, handlers).then((reply) => reply && post(reply));
        }),
        view.onDidChangeVisibility(follow),
      ];
      view.onDidDispose(() => {
        clearInterval(timer);
        for (const s of subs) s.dispose();
      });
    },
  };
  return vscode.window.registerWebviewViewProvider(MEMORY_VIEW_ID, provider);
}
