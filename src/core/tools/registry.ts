import { answerRequestTool } from './answerRequest';
import { askAgentTool } from './askAgent';
import { chatHistoryTool } from './chatHistory';
import { chaptersArtifactTool } from './chaptersArtifact';
import { chaptersContinueTool } from './chaptersContinue';
import { chaptersForkTool } from './chaptersFork';
import { chaptersRuleProposeTool } from './chaptersRulePropose';
import { chaptersRulesTool } from './chaptersRules';
import { chaptersSearchTool } from './chaptersSearch';
import { chaptersSegmentTool } from './chaptersSegment';
import { closeRequestTool } from './closeRequest';
import { errorHistoryTool } from './errorHistory';
import { getContextTool } from './getContext';
import { indexMemoryTool } from './indexMemory';
import { lcmDescribeTool } from './lcmDescribe';
import { lcmExpandTool } from './lcmExpand';
import { lcmExpandQueryTool } from './lcmExpandQuery';
import { lcmGrepTool } from './lcmGrep';
import { listRequestsTool } from './listRequests';
import { lookupEntityTool } from './lookupEntity';
import { memoryMapTool } from './memoryMap';
import { memoryStatusTool } from './memoryStatus';
import { readMemoryTool } from './readMemory';
import { reasoningGuideTool } from './reasoningGuide';
import { rememberTool } from './remember';
import { rememberNoteTool } from './rememberNote';
import { restoreMemoryTool } from './restoreMemory';
import { retireMemoryTool } from './retireMemory';
import { retrieveMemoryTool } from './retrieveMemory';
import { saveMemoryTool } from './saveMemory';
import { searchHistoryTool } from './searchHistory';
import { searchMemoryTool } from './searchMemory';
import { searchTextTool } from './searchText';
import type { ToolDefinition } from './toolDefinition';
import { whatsNewTool } from './whatsNew';
import { exportMemoryTool } from './exportMemory';
import { previewImportTool } from './previewImport';
import { applyImportTool } from './applyImport';
import { undoImportTool } from './undoImport';
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
  getContextTool,
  searchMemoryTool,
  searchHistoryTool,
  lookupEntityTool,
  memoryMapTool,
  readMemoryTool,
  rememberNoteTool,
  retireMemoryTool,
  restoreMemoryTool,
  indexMemoryTool,
  exportMemoryTool,
  previewImportTool,
  applyImportTool,
  undoImportTool,
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
  lcmGrepTool,
  lcmDescribeTool,
  lcmExpandQueryTool,
  lcmExpandTool,
  chaptersSegmentTool,
  chaptersContinueTool,
  chaptersForkTool,
  chaptersSearchTool,
  chaptersArtifactTool,
  chaptersRuleProposeTool,
  chaptersRulesTool,
] as readonly ToolDefinition[];

export function findTool(name: string): ToolDefinition | undefined {
  return TOOLS.find((t) => t.name === name);
}
