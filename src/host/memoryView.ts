import * as vscode from 'vscode';
import { MemoryBrowse } from '../core/memory/memoryBrowse';
import type { Services } from '../core/services';
import type { HostMessage, RequestHandlers } from '../../webview/shared/protocol';
import { answerWebviewMessage, memoryViewHandlers } from './memoryViewHandlers';
import { renderWebview } from './webviewHtml';

export const MEMORY_VIEW_ID = 'recollect.memory';

/**
 * Other processes (the MCP server, the CLI, another window) write to the same store, so a
 * visible view looks for changes now and then. A look is one fstat plus two counts.
 */
const POLL_MS = 4_000;

/** The sidebar memory browser: a webview answered by the vscode-free handlers. */
export function registerMemoryView(context: vscode.ExtensionContext, services: Promise<Services>): vscode.Disposable {
  const ready = services.then((s) => {
    const browse = new MemoryBrowse(s.store);
    return { browse, handlers: memoryViewHandlers(s, browse) };
  });
  // Without this a failed open would surface as an unhandled rejection; the container reports it.
  ready.catch(() => undefined);
  const handlers: Promise<RequestHandlers> = ready.then((r) => r.handlers);

  const provider: vscode.WebviewViewProvider = {
    resolveWebviewView(view) {
      renderWebview(view.webview, context.extensionUri, 'memory', 'Recollect Memory');
      const post = (msg: HostMessage) => void view.webview.postMessage(msg);
      let seen: string | undefined;
      let timer: NodeJS.Timeout | undefined;

      const look = async () => {
        const { browse } = await ready;
        const version = browse.version();
        if (seen !== undefined && version !== seen) post({ type: 'changed' });
        seen = version;
      };
      const lookQuietly = () => look().catch(() => undefined);
      const follow = (shown: boolean) => {
        clearInterval(timer);
        timer = undefined;
        if (!view.visible) return;
        // Hidden, the view may have missed writes; it refetches once instead of polling in the dark.
        if (shown) post({ type: 'changed' });
        void lookQuietly();
        timer = setInterval(() => void lookQuietly(), POLL_MS);
      };
      follow(false);

      const subs = [
        view.webview.onDidReceiveMessage((raw: unknown) => {
          void answerWebviewMessage(raw, handlers).then((reply) => reply && post(reply));
        }),
        view.onDidChangeVisibility(() => follow(true)),
      ];
      view.onDidDispose(() => {
        clearInterval(timer);
        for (const s of subs) s.dispose();
      });
    },
  };
  return vscode.window.registerWebviewViewProvider(MEMORY_VIEW_ID, provider);
}
