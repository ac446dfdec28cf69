import { answerRequestTool } from './answerRequest';
import { askAgentTool } from './askAgent';
import { chatHistoryTool } from './chatHistory';
import { closeRequestTool } from './closeRequest';
import { errorHistoryTool } from './errorHistory';
import { listRequestsTool } from './listRequests';
import { memoryStatusTool } from './memoryStatus';
import { reasoningGuideTool } from './reasoningGuide';
import { rememberTool } from './remember';
import { retrieveMemoryTool } from './retrieveMemory';
import { saveMemoryTool } from './saveMemory';
import { searchTextTool } from './searchText';
import type { ToolDefinition } from './toolDefinition';
import { whatsNewTool } from './whatsNew';
import { writeErrorTool } from './writeError';
import { writeResultTool } from './writeResult';

/**
 * The single source of truth for what Recollect offers: VS Code's language-model tools, the
 * MCP tool list, the CLI and package.json's `contributes.languageModelTools` all come from here.
 */
export const TOOLS: readonly ToolDefinition[] = [
  rememberTool,
  saveMemoryTool,
  retrieveMemoryTool,
  searchTextTool,
  memoryStatusTool,
  chatHistoryTool,
  errorHistoryTool,
  writeErrorTool,
  reasoningGuideTool,
  writeResultTool,
  whatsNewTool,
  askAgentTool,
  listRequestsTool,
  answerRequestTool,
  closeRequestTool,
] as readonly ToolDefinition[];

export function findTool(name: string): ToolDefinition | undefined {
  return TOOLS.find((t) => t.name === name);
}
