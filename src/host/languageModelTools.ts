import * as vscode from 'vscode';
import { refuse } from '../core/refusal';
import type { Services } from '../core/services';
import { invokeTool } from '../core/tools/invoke';
import { TOOLS } from '../core/tools/registry';
import type { ToolDefinition, ToolFamily } from '../core/tools/toolDefinition';

/**
 * Copilot in VS Code is one named connection, whichever window calls: the name its calls are
 * saved under when they name no `source`, and the name other agents address requests to.
 */
const DEFAULT_CONNECTION = 'copilot';
const connectionName = () => vscode.workspace.getConfiguration('recollect').get<string>('connectionName')?.trim() || DEFAULT_CONNECTION;

/**
 * Registers every tool of the registry with VS Code. The store may still be opening when a
 * call arrives, so each call waits for it; a store that failed to open answers with a refusal
 * that says why instead of hanging the chat.
 */
export function registerLanguageModelTools(services: Promise<Services>, familyEnabled: (f: ToolFamily) => boolean, workspace: () => string | undefined): vscode.Disposable[] {
  return TOOLS.map((tool) => vscode.lm.registerTool(tool.name, adapt(tool, services, familyEnabled, workspace)));
}

function adapt(tool: ToolDefinition, services: Promise<Services>, familyEnabled: (f: ToolFamily) => boolean, workspace: () => string | undefined): vscode.LanguageModelTool<object> {
  return {
    prepareInvocation(options) {
      const parsed = tool.input.safeParse(options.input);
      if (!tool.confirm || !parsed.success) return { invocationMessage: `Recollect: ${tool.displayName}` };
      const { title, message } = tool.confirm(parsed.data);
      return {
        invocationMessage: `Recollect: ${tool.displayName}`,
        confirmationMessages: { title, message: new vscode.MarkdownString().appendText(message) },
      };
    },
    async invoke(options) {
      let result: object;
      if (familyEnabled(tool.family)) {
        const s = await services;
        const client = connectionName();
        // Noting the connection must never fail the call; a broken store is reported by the call itself.
        await s.requests.connections.seen(client).catch(() => undefined);
        result = await invokeTool(tool, options.input, s, { client, workspace: workspace() });
      } else {
        result = refuse(`the "${tool.family}" tool family is switched off in the setting recollect.toolFamilies`);
      }
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(result))]);
    },
  };
}
