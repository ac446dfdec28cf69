import { nextSessionIn, openWith, type NextSessionOpener } from '../core/chapters/chaptersService';
import type { StoreAccess } from '../core/owner/storeAccess';
import type { ToolContext } from '../core/tools/toolDefinition';

// No `vscode` here: the window-client test runs this in a second process standing in for a window.

/**
 * A tool called from this window, run by whichever process owns the store (this window or the
 * one it is a client of). A next session it makes (chapters_continue, chapters_fork) is opened
 * here, by this window's opener, in the window the person is talking in: the owner leaves it
 * unopened for a caller that opens it itself, so a client window's chat is never offered in
 * another window.
 */
export async function callToolHere(store: StoreAccess, opener: NextSessionOpener, name: string, input: unknown, ctx: ToolContext): Promise<object> {
  const answer = await store.callTool(name, input, { ...ctx, callerOpens: true });
  const next = nextSessionIn(name, answer);
  if (!next) return answer;
  return { ...answer, opened: await openWith(opener, next) };
}
