import * as vscode from 'vscode';
import { refuse } from '../core/refusal';
import type { Services } from '../core/services';
import { invokeTool } from '../core/tools/invoke';
import { TOOLS } from '../core/tools/registry';
import type { ToolDefinition, ToolFamily } from '../core/tools/toolDefinition';

/** The name Copilot Chat's calls are saved under when a tool call names no `source`. */
const COPILOT_CLIENT = 'copilot-chat';

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
      const result = familyEnabled(tool.family)
        ? await invokeTool(tool, options.input, await services, { client: COPILOT_CLIENT, workspace: workspace() })
        : refuse(`the "${tool.family}" tool family is switched off in the setting recollect.toolFamilies`);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(result))]);
    },
  };
}
