// No `vscode` here: the command lines are checked in unit tests.
import { RETURNING_MALLOC_ENV } from '../core/store/memoryBudget';

export type McpCommandFormat = 'shell' | 'claude' | 'codex' | 'json';

export interface McpLaunch {
  /** Absolute path of the extension's dist/cli.js. */
  cli: string;
  /** The store the other agent should share with this window. */
  home: string;
  platform?: NodeJS.Platform;
}

/** Quotes for a POSIX shell (single quotes; an embedded quote closes, escapes and reopens). */
function shq(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Quotes for cmd.exe / PowerShell where double quotes suffice for paths. */
function winq(text: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(text) ? text : `"${text}"`;
}

function tomlString(text: string): string {
  return JSON.stringify(text);
}

/**
 * How another agent starts Recollect's MCP server on the same store: `node <cli> mcp` with
 * RECOLLECT_HOME set (and on Linux the malloc setting that keeps its memory within the budget,
 * memoryBudget.ts), written the way each place expects it.
 */
export function mcpCommand(format: McpCommandFormat, launch: McpLaunch): string {
  const platform = launch.platform ?? process.platform;
  const windows = platform === 'win32';
  const q = windows ? winq : shq;
  const env: [string, string][] = [['RECOLLECT_HOME', launch.home], ...(platform === 'linux' ? Object.entries(RETURNING_MALLOC_ENV) : [])];
  switch (format) {
    case 'shell':
      return windows
        ? `${env.map(([k, v]) => `$env:${k}=${q(v)}; `).join('')}node ${q(launch.cli)} mcp`
        : `${env.map(([k, v]) => `${k}=${q(v)} `).join('')}node ${q(launch.cli)} mcp`;
    // Named connections keep an agent's name stable for requests between agents, whatever its client calls itself.
    case 'claude':
      return `claude mcp add recollect ${env.map(([k, v]) => `-e ${k}=${q(v)} `).join('')}-- node ${q(launch.cli)} mcp --name claude-code`;
    case 'codex':
      return [
        '[mcp_servers.recollect]',
        'command = "node"',
        `args = [${tomlString(launch.cli)}, "mcp", "--name", "codex"]`,
        `env = { ${env.map(([k, v]) => `${k} = ${tomlString(v)}`).join(', ')} }`,
      ].join('\n');
    case 'json':
      return JSON.stringify({ mcpServers: { recollect: { command: 'node', args: [launch.cli, 'mcp'], env: Object.fromEntries(env) } } }, null, 2);
  }
}

export const MCP_FORMAT_LABELS: Record<McpCommandFormat, string> = {
  shell: 'Shell command',
  claude: 'Claude Code (claude mcp add)',
  codex: 'Codex (~/.codex/config.toml)',
  json: 'JSON (mcpServers entry: Cursor, Claude Desktop, …)',
};
