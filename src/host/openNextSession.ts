import * as vscode from 'vscode';
import type { NextSession, NextSessionOpener } from '../core/chapters/chaptersService';

/** Internal workbench commands: present in VS Code today, not promised by the API, so they are looked for first. */
const NEW_CHAT = 'workbench.action.chat.newChat';
const OPEN_CHAT = 'workbench.action.chat.open';
/** VS Code's chat view is empty without a chat provider; on 1.100 that is GitHub Copilot Chat. */
const CHAT_PROVIDER = 'github.copilot-chat';

export interface Opened {
  opened: boolean;
  how: string;
}

/**
 * Opens a new chat whose input holds the next session's first message (not sent: the person
 * reads it and presses Enter), in agent mode. Where the commands are missing or fail, the text
 * goes to the clipboard and a message says so.
 */
export async function openNextSession(text: string): Promise<Opened> {
  const available = new Set(await vscode.commands.getCommands(true));
  const hasProvider = vscode.extensions.getExtension(CHAT_PROVIDER) !== undefined;
  const missing = [NEW_CHAT, OPEN_CHAT].filter((c) => !available.has(c));
  let failure = missing.length ? `this VS Code has no ${missing.join(' or ')} command` : 'no chat extension (GitHub Copilot Chat) is installed to open a chat in';
  if (!missing.length && hasProvider) {
    try {
      await vscode.commands.executeCommand(NEW_CHAT);
      await vscode.commands.executeCommand(OPEN_CHAT, { query: text, isPartialQuery: true, mode: 'agent' });
      return { opened: true, how: 'a new chat opened in agent mode with the table of contents and note in its input, ready to send' };
    } catch (err) {
      failure = `opening the chat failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage("Recollect: the next session's first message is on the clipboard. Open a new chat and paste it.", 'Open Chat').then((pick) => {
    if (pick) void vscode.commands.executeCommand(available.has(OPEN_CHAT) ? OPEN_CHAT : 'workbench.panel.chat.view.copilot.focus');
  });
  return { opened: false, how: `copied to the clipboard (${failure}); paste it as the first message of a new chat` };
}

/**
 * For a model's chapters_continue/chapters_fork inside a Copilot turn: a new chat is not opened
 * in the middle of that turn; the person is offered it, and the tool answer says so.
 */
export function offeringOpener(): NextSessionOpener {
  return {
    open(next: NextSession) {
      const label = next.intent === 'fork' ? 'Open the branch' : 'Open the next session';
      void vscode.window.showInformationMessage(`Recollect: ${next.intent === 'fork' ? 'a branch' : 'the next session'} is ready (${next.childSessionId}).`, label, 'Copy first message').then(async (pick) => {
        if (pick === label) await openNextSession(next.firstMessage);
        else if (pick) await vscode.env.clipboard.writeText(next.firstMessage);
      });
      return Promise.resolve({ opened: false, how: 'offered: VS Code asks the person to open the next session (not opened in the middle of this turn); firstMessage is its first message' });
    },
  };
}
