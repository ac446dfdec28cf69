import * as vscode from 'vscode';
import { refuse } from '../core/refusal';
import type { NextSessionOpener } from '../core/chapters/chaptersService';
import type { StoreAccess } from '../core/owner/storeAccess';
import { TOOLS } from '../core/tools/registry';
import { confirmationFor, type ToolDefinition, type ToolFamily } from '../core/tools/toolDefinition';
import { callToolHere } from './toolCall';

/**
 * `LanguageModelDataPart.json` where tool results may carry it: VS Code 1.106 and later.
 * @types/vscode stays at the engines version, 1.100, which does not declare it; 1.100 has the
 * class (as a proposal) but refuses a JSON part in a tool result ("Invalid MIME type"), so the
 * version decides, not only the class's presence.
 */
type JsonPartFactory = (value: unknown) => object;
const JSON_PART_SINCE_MINOR = 106;
const jsonPart = (): JsonPartFactory | undefined => {
  const [major = 0, minor = 0] = vscode.version.split('.').map(Number);
  if (major === 1 && minor < JSON_PART_SINCE_MINOR) return undefined;
  const DataPart = (vscode as unknown as { LanguageModelDataPart?: { json?: JsonPartFactory } }).LanguageModelDataPart;
  return typeof DataPart?.json === 'function' ? DataPart.json.bind(DataPart) : undefined;
};

/**
 * Registers every tool of the registry with VS Code. The store may still be opening when a
 * call arrives, so each call waits for it; a store that failed to open answers with a refusal
 * that says why instead of hanging the chat.
 */
export function registerLanguageModelTools(store: StoreAccess, opener: NextSessionOpener, familyEnabled: (f: ToolFamily) => boolean, workspace: () => string | undefined, connectionName: () => string): vscode.Disposable[] {
  return TOOLS.map((tool) => vscode.lm.registerTool(tool.name, adapt(tool, store, opener, familyEnabled, workspace, connectionName)));
}

function adapt(tool: ToolDefinition, store: StoreAccess, opener: NextSessionOpener, familyEnabled: (f: ToolFamily) => boolean, workspace: () => string | undefined, connectionName: () => string): vscode.LanguageModelTool<object> {
  return {
    prepareInvocation(options) {
      const parsed = tool.input.safeParse(options.input);
      // Input the schema refuses asks nothing: the call itself answers with the refusal.
      const confirmation = parsed.success ? confirmationFor(tool, parsed.data) : undefined;
      if (!confirmation) return { invocationMessage: `Recollect: ${tool.displayName}` };
      return {
        invocationMessage: `Recollect: ${tool.displayName}`,
        confirmationMessages: { title: confirmation.title, message: new vscode.MarkdownString().appendText(confirmation.message) },
      };
    },
    async invoke(options) {
      let result: object;
      if (familyEnabled(tool.family)) {
        const client = connectionName();
        // Noting the connection must never fail the call; a broken store is reported by the call itself.
        await store.connectionSeen(client).catch(() => undefined);
        // Run by whichever process owns the store (this window, or the one it is a client of); a next session opens in this window.
        result = await callToolHere(store, opener, tool.name, options.input, { client, workspace: workspace() });
      } else {
        result = refuse(`the "${tool.family}" tool family is switched off in the setting recollect.toolFamilies`);
      }
      // Structured where VS Code can carry it (the model reads the same JSON either way), as
      // VS Code's own MCP client passes structuredContent instead of the text beside it.
      const json = jsonPart();
      return new vscode.LanguageModelToolResult([json ? (json(result) as vscode.LanguageModelTextPart) : new vscode.LanguageModelTextPart(JSON.stringify(result))]);
    },
  };
}
