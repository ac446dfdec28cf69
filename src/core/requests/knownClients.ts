import { connectionKey } from './connectionName';

/**
 * One agent, one connection name, whichever transport it comes in on: clients name themselves
 * in `clientInfo.name` differently from what people call them (Codex says `codex-mcp-client`
 * while its stdio entry is written `--name codex`), and a request addressed to `codex` must
 * reach it either way. Keys are compared as connectionKey compares names.
 */
const KNOWN_CLIENTS: Readonly<Record<string, string>> = {
  'claude-code': 'claude-code',
  'claude-ai': 'claude-desktop',
  'codex-mcp-client': 'codex',
  codex: 'codex',
  'cursor-vscode': 'cursor',
  cursor: 'cursor',
  // VS Code's own MCP client: the agent behind it is Copilot, the name its language-model tools use.
  'visual studio code': 'copilot',
  'visual studio code - insiders': 'copilot',
  'visual-studio-code': 'copilot',
  copilot: 'copilot',
  'gemini-cli-mcp-client': 'gemini-cli',
  'gemini-cli': 'gemini-cli',
};

/** The connection name for what a client called itself: a known client's one name, else its own. */
export function canonicalClientName(clientInfoName: string): string {
  return KNOWN_CLIENTS[connectionKey(clientInfoName)] ?? clientInfoName.trim();
}
