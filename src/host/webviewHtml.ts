import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
// Types only: the document builder below runs in the webview tests, outside VS Code.
import type * as vscode from 'vscode';

/** Where Vite puts each view's bundle (scripts/build.mjs): dist/webview/<name>.js and .css. */
const WEBVIEW_DIR = ['dist', 'webview'] as const;

export interface WebviewDocument {
  /** The view's name, as in webview/<name>/main.tsx. */
  name: string;
  title: string;
  /** `webview.cspSource`: the only origin styles, images, fonts and scripts may come from. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  /** VS Code's icon font (codicon.css beside the bundles), so views use the editor's own icons. */
  codiconUri?: string;
  nonce?: string;
}

/**
 * The page every Recollect webview is: one stylesheet, one module script carrying a fresh
 * nonce, and a CSP that allows nothing else (no inline script or style, no network).
 */
export function webviewDocument(doc: WebviewDocument): string {
  const nonce = doc.nonce ?? randomBytes(18).toString('base64');
  const csp = [
    `default-src 'none'`,
    `style-src ${doc.cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${doc.cspSource} data:`,
    `font-src ${doc.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${doc.codiconUri ? `<link rel="stylesheet" href="${attr(doc.codiconUri)}">\n` : ''}<link rel="stylesheet" href="${attr(doc.styleUri)}">
<title>${attr(doc.title)}</title>
</head>
<body>
<div id="app" data-view="${attr(doc.name)}"></div>
<script type="module" nonce="${nonce}" src="${attr(doc.scriptUri)}"></script>
</body>
</html>`;
}

/** Points a webview at its bundle: scripts on, resources limited to the built webview folder. */
export function renderWebview(webview: vscode.Webview, extensionUri: vscode.Uri, name: string, title: string): void {
  // Uri.with rather than vscode.Uri.joinPath keeps this module free of a runtime vscode import.
  const under = (...parts: string[]) => extensionUri.with({ path: path.posix.join(extensionUri.path, ...WEBVIEW_DIR, ...parts) });
  webview.options = { enableScripts: true, localResourceRoots: [under()] };
  webview.html = webviewDocument({
    name,
    title,
    cspSource: webview.cspSource,
    scriptUri: webview.asWebviewUri(under(`${name}.js`)).toString(),
    styleUri: webview.asWebviewUri(under(`${name}.css`)).toString(),
    codiconUri: webview.asWebviewUri(under('codicon.css')).toString(),
  });
}

function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
