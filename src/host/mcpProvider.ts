import * as path from 'node:path';
import * as vscode from 'vscode';

/** Must match `contributes.mcpServerDefinitionProviders[].id` in package.json. */
export const MCP_PROVIDER_ID = 'recollect.mcpServers';
/** The connection name VS Code's own MCP client gets, apart from Copilot's tool calls ("copilot"). */
export const VSCODE_MCP_CONNECTION = 'vscode-mcp';

/** The slice of the MCP definition API (VS Code ≥ 1.101) we use; @types/vscode 1.100 does not declare it. */
interface McpStdioDefinitionCtor {
  new (label: string, command: string, args?: string[], env?: Record<string, string | number | null>, version?: string): object;
}
interface McpLanguageModelApi {
  registerMcpServerDefinitionProvider?(id: string, provider: { provideMcpServerDefinitions(): object[] }): vscode.Disposable;
}

/**
 * Offers Recollect's MCP server to the MCP-aware parts of VS Code, so they reach the same store
 * as Copilot's tools. The server runs on the extension host's own runtime (process.execPath with
 * ELECTRON_RUN_AS_NODE), so it needs no `node` on PATH. A VS Code without the API (1.100, the
 * oldest we support) gets nothing registered, and the log says so.
 */
export function registerMcpProvider(extensionPath: string, home: string, version: string, log: vscode.LogOutputChannel): vscode.Disposable {
  const lm = vscode.lm as unknown as McpLanguageModelApi;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioDefinitionCtor }).McpStdioServerDefinition;
  if (typeof lm.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    log.info(`VS Code ${vscode.version} has no MCP server definition API; Recollect's MCP server is not registered with it (Copilot still reaches the store through the language-model tools)`);
    return { dispose: () => undefined };
  }
  const cli = path.join(extensionPath, 'dist', 'cli.js');
  try {
    const registration = lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      provideMcpServerDefinitions: () => [
        new Definition('Recollect', process.execPath, [cli, 'mcp', '--name', VSCODE_MCP_CONNECTION], { RECOLLECT_HOME: home, ELECTRON_RUN_AS_NODE: '1' }, version),
      ],
    });
    log.info(`registered Recollect's MCP server with VS Code (${MCP_PROVIDER_ID}, connection "${VSCODE_MCP_CONNECTION}", store ${home})`);
    return registration;
  } catch (err) {
    // VS Code 1.100 exposes a proposed form of this API to extensions in development and then
    // refuses our provider (it expects an older contribution point); the rest of Recollect must still start.
    log.warn(`VS Code ${vscode.version} refused Recollect's MCP server definition: ${err instanceof Error ? err.message : String(err)}`);
    return { dispose: () => undefined };
  }
}
