import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HistorySource } from './parsedSession';

export type SourceSwitch = 'vscode' | 'claudeCode' | 'codex' | 'copilotCli';

export interface TranscriptRoot {
  path: string;
  switch: SourceSwitch;
  source: HistorySource;
}

/** Where agents other than VS Code keep their transcripts, under a user's home folder. */
export function agentTranscriptRoots(userHome: string): TranscriptRoot[] {
  return [
    { path: path.join(userHome, '.claude', 'projects'), switch: 'claudeCode', source: 'claude-code' },
    { path: path.join(userHome, '.codex', 'sessions'), switch: 'codex', source: 'codex' },
    { path: path.join(userHome, '.copilot', 'session-state'), switch: 'copilotCli', source: 'copilot-cli' },
  ];
}

/**
 * VS Code's own chat files, for every workspace of this installation: each workspace's
 * `chatSessions/` and Copilot's `transcripts/`, plus the empty-window sessions. Only those
 * folders are walked, because workspaceStorage also holds much unrelated JSON.
 */
export function vscodeTranscriptRoots(workspaceStorage: string, globalStorage: string): TranscriptRoot[] {
  const roots: TranscriptRoot[] = [];
  const add = (p: string) => fs.existsSync(p) && roots.push({ path: p, switch: 'vscode', source: 'vscode-chat' });
  let workspaces: string[] = [];
  try {
    workspaces = fs.readdirSync(workspaceStorage);
  } catch {
    // No workspace storage yet: nothing to import.
  }
  for (const ws of workspaces) {
    add(path.join(workspaceStorage, ws, 'chatSessions'));
    add(path.join(workspaceStorage, ws, 'GitHub.copilot-chat', 'transcripts'));
  }
  add(path.join(globalStorage, 'emptyWindowChatSessions'));
  add(path.join(globalStorage, 'GitHub.copilot-chat', 'transcripts'));
  return roots;
}
