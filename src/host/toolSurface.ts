import * as vscode from 'vscode';
import { MCP_SURFACE_CONTEXT } from '../core/tools/jsonSchema';
import type { NextSessionOpener } from '../core/chapters/chaptersService';
import type { StoreAccess } from '../core/owner/storeAccess';
import type { ToolFamily } from '../core/tools/toolDefinition';
import { registerLanguageModelTools } from './languageModelTools';
import { registerMcpProvider } from './mcpProvider';

/**
 * One tool surface per VS Code, never both: were the language-model tools and VS Code's own
 * MCP client of Recollect's server both on, a model would see every tool twice.
 *
 * The language-model tools are the default: they run in the extension host, on the store it
 * owns or through its owner (the MCP route starts a second process on the same store), they reach VS Code
 * 1.100 (the MCP definition API is 1.101+), they ask the person before a write with
 * Recollect's own wording, and the tool families can be switched off. `recollect.toolSurface`
 * = "mcp" moves Copilot to the MCP server instead, as the same connection name.
 */
export type ToolSurface = 'languageModelTools' | 'mcp';

export interface ToolSurfaceDeps {
  /** The store's tools, run by whichever process owns it (this window or the one it is a client of). */
  store: StoreAccess;
  /** How a tool's next session opens in this window (openNextSession.ts). */
  opener: NextSessionOpener;
  familyEnabled: (f: ToolFamily) => boolean;
  workspace: () => string | undefined;
  extensionPath: string;
  home: string;
  version: string;
  log: vscode.LogOutputChannel;
}

const setting = (): ToolSurface => (vscode.workspace.getConfiguration('recollect').get<string>('toolSurface') === 'mcp' ? 'mcp' : 'languageModelTools');

/** Copilot in VS Code is one named connection on either surface (recollect.connectionName). */
export const copilotConnectionName = () => vscode.workspace.getConfiguration('recollect').get<string>('connectionName')?.trim() || 'copilot';

export function registerToolSurface(deps: ToolSurfaceDeps): vscode.Disposable {
  // Offered only when chosen: VS Code asks a registered provider, so where it took none, nothing is offered.
  const mcp = registerMcpProvider({
    extensionPath: deps.extensionPath,
    home: deps.home,
    version: deps.version,
    log: deps.log,
    offered: () => setting() === 'mcp',
    connectionName: copilotConnectionName,
  });
  const effective = (): ToolSurface => (setting() === 'mcp' && mcp.registered ? 'mcp' : 'languageModelTools');
  let lmTools: vscode.Disposable[] = [];

  const apply = () => {
    const surface = effective();
    if (setting() === 'mcp' && !mcp.registered) deps.log.warn(`recollect.toolSurface is "mcp", but VS Code ${vscode.version} did not take Recollect's MCP server; the language-model tools stay on`);
    // Hides the contributed tools in the tools picker while the MCP server is the surface (package.json's `when`).
    void vscode.commands.executeCommand('setContext', MCP_SURFACE_CONTEXT, surface === 'mcp');
    if (surface === 'languageModelTools' && !lmTools.length) lmTools = registerLanguageModelTools(deps.store, deps.opener, deps.familyEnabled, deps.workspace, copilotConnectionName);
    if (surface === 'mcp' && lmTools.length) {
      for (const d of lmTools.splice(0)) d.dispose();
    }
    mcp.refresh();
    deps.log.info(`tool surface: ${surface === 'mcp' ? "Recollect's MCP server, through VS Code's MCP client" : 'the language-model tools'}`);
  };
  apply();
  const watch = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('recollect.toolSurface')) apply();
  });
  return {
    dispose() {
      watch.dispose();
      for (const d of lmTools.splice(0)) d.dispose();
      mcp.dispose();
    },
  };
}
