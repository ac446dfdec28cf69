import * as path from 'node:path';
import * as vscode from 'vscode';
import { RETURNING_MALLOC_ENV } from '../core/store/memoryBudget';

/** Must match `contributes.mcpServerDefinitionProviders[].id` in package.json. */
export const MCP_PROVIDER_ID = 'recollect.mcpServers';

/** The slice of the MCP definition API (VS Code ≥ 1.101) we use; @types/vscode 1.100 does not declare it. */
interface McpStdioDefinitionCtor {
  new (label: string, command: string, args?: string[], env?: Record<string, string | number | null>, version?: string): object;
}
interface McpServerDefinitionProvider {
  onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(): object[];
}
interface McpLanguageModelApi {
  registerMcpServerDefinitionProvider?(id: string, provider: McpServerDefinitionProvider): vscode.Disposable;
}

/** The running VS Code's MCP definition API, or undefined where it has none (1.100). */
export function mcpDefinitionApi(): { register: NonNullable<McpLanguageModelApi['registerMcpServerDefinitionProvider']>; Definition: McpStdioDefinitionCtor } | undefined {
  const lm = vscode.lm as unknown as McpLanguageModelApi;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioDefinitionCtor }).McpStdioServerDefinition;
  if (typeof lm.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') return undefined;
  return { register: lm.registerMcpServerDefinitionProvider.bind(lm), Definition };
}

export interface McpProviderDeps {
  extensionPath: string;
  home: string;
  version: string;
  log: vscode.LogOutputChannel;
  /** Whether the MCP server is this window's tool surface (toolSurface.ts); when not, no server is offered. */
  offered: () => boolean;
  connectionName: () => string;
}

export interface McpProviderRegistration extends vscode.Disposable {
  /** Whether VS Code took the provider: false on a VS Code without the API or one that refused it. */
  registered: boolean;
  /** Tells VS Code to ask for the definitions again (the surface or the connection name changed). */
  refresh(): void;
}

/**
 * Offers Recollect's MCP server to VS Code's MCP client when it is the tool surface, so its
 * tools reach the same store as the language-model tools would. The server runs on the
 * extension host's own runtime (process.execPath with ELECTRON_RUN_AS_NODE), so it needs no
 * `node` on PATH, and it is named like Copilot's language-model tools (recollect.connectionName).
 * A VS Code without the API (1.100, the oldest we support) gets nothing registered.
 */
export function registerMcpProvider(deps: McpProviderDeps): McpProviderRegistration {
  const api = mcpDefinitionApi();
  const changed = new vscode.EventEmitter<void>();
  if (!api) {
    deps.log.info(`VS Code ${vscode.version} has no MCP server definition API; Recollect's MCP server is not registered with it`);
    return { registered: false, refresh: () => undefined, dispose: () => changed.dispose() };
  }
  const cli = path.join(deps.extensionPath, 'dist', 'cli.js');
  let registration: vscode.Disposable | undefined;
  try {
    registration = api.register(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () =>
        deps.offered()
          ? [new api.Definition('Recollect', process.execPath, [cli, 'mcp', '--name', deps.connectionName()], { RECOLLECT_HOME: deps.home, ELECTRON_RUN_AS_NODE: '1', ...(process.platform === 'linux' ? RETURNING_MALLOC_ENV : {}) }, deps.version)]
          : [],
    });
    deps.log.info(`registered Recollect's MCP server provider with VS Code (${MCP_PROVIDER_ID}, store ${deps.home})`);
  } catch (err) {
    // VS Code 1.100 exposes a proposed form of this API to extensions in development and then
    // refuses our provider (it expects an older contribution point); the rest of Recollect must still start.
    deps.log.warn(`VS Code ${vscode.version} refused Recollect's MCP server definition: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    registered: registration !== undefined,
    refresh: () => changed.fire(),
    dispose() {
      registration?.dispose();
      changed.dispose();
    },
  };
}
