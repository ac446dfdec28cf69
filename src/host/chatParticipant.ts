import * as vscode from 'vscode';
import type { ContinueResult } from '../core/chapters/archive';
import type { ChildIntent } from '../core/chapters/chaptersSchema';
import { isRefusal } from '../core/refusal';
import type { RemoteServices } from '../core/owner/serviceProxy';
import type { Services } from '../core/services';
import { openNextSession } from './openNextSession';

export interface ChaptersHostDeps {
  services: Promise<RemoteServices>;
  /** Runs `fn` on this window's own services whenever it owns the store (storeOwnership.ts). */
  whenOwner(fn: (s: Services) => void): void;
  /** Imports the watched transcript folders now, so the chat being talked in is in the store. */
  importNow(): Promise<unknown>;
  log: vscode.LogOutputChannel;
}

export const PARTICIPANT_ID = 'recollect.chapters';
/** The participant's own client name in the store (who archived, who proposed). */
export const PARTICIPANT_CLIENT = 'recollect-participant';
/** VS Code may write a chat's transcript a moment after the request starts; look this many times. */
const FIND_ATTEMPTS = 4;
const FIND_DELAY_MS = 750;

/**
 * `@recollect` — the deterministic door. /continue and /fork (the spec's /chapters-continue and
 * /chapters-fork) archive this chat up to its last finished turn with ranges Recollect derives
 * itself, then open the next chat with the table of contents and the note (what the person typed
 * after the command); /status shows what is archived, /search searches the archive.
 */
export function registerChatParticipant(context: vscode.ExtensionContext, deps: ChaptersHostDeps): vscode.Disposable {
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, (request, _context, stream, token) => handle(deps, request, stream, token));
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'recollect.svg');
  return participant;
}

async function handle(deps: ChaptersHostDeps, request: vscode.ChatRequest, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
  const s = await deps.services;
  switch (request.command) {
    case 'continue':
    case 'fork':
      return door(deps, s, request.command, request.prompt, stream, token);
    case 'status':
      return status(deps, s, stream, token);
    case 'search':
      return search(s, request.prompt, stream);
    default:
      stream.markdown(
        [
          '**Recollect** archives this chat as verbatim chapters and opens the next one from their table of contents.',
          '',
          '- `/continue [note]` — archive up to the last finished turn and continue in a new chat (the note is your handoff)',
          '- `/fork [note]` — archive the same way and open a branch that tries another angle',
          '- `/status` — what is archived of this chat and where it came from',
          '- `/search <words>` — search every archived chapter and plan',
        ].join('\n'),
      );
      return {};
  }
}

async function door(deps: ChaptersHostDeps, s: RemoteServices, intent: ChildIntent, note: string, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
  stream.progress('Finding this chat in the imported history…');
  const chat = await findThisChat(deps, s, intent, token);
  if (!chat) return await notFound(s, intent, stream);
  stream.progress(`Archiving "${chat.title ?? chat.id}"…`);
  const result = await s.chapters.door({ sessionId: chat.id, intent, note: note.trim() || undefined, client: PARTICIPANT_CLIENT });
  if (isRefusal(result)) {
    stream.markdown(new vscode.MarkdownString().appendMarkdown('**Nothing was archived.** ').appendText(result.reason));
    return { errorDetails: { message: result.reason } };
  }
  stream.markdown(describe(result));
  stream.button({ command: 'recollect.openNextSession', title: intent === 'fork' ? 'Open the branch again' : 'Open the next session again', arguments: [{ childSessionId: result.childSessionId }] });
  // After this response is finished, not in the middle of it: the new chat replaces this view.
  setTimeout(() => {
    void openNextSession(result.firstMessage).then((o) => deps.log.info(`next session ${result.childSessionId}: ${o.how}`));
  }, 50);
  return { metadata: { childSessionId: result.childSessionId } };
}

/** This chat: the newest VS Code chat whose latest request is this very command, once its transcript is on disk. */
async function findThisChat(deps: ChaptersHostDeps, s: RemoteServices, command: string, token: vscode.CancellationToken) {
  for (let attempt = 0; attempt < FIND_ATTEMPTS && !token.isCancellationRequested; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, FIND_DELAY_MS));
    await deps.importNow();
    const found = await s.chapters.chatEndingWith(['@recollect', `/${command}`]);
    if (found) return found;
  }
  return undefined;
}

/** Never a guess that archives the wrong chat: the person picks with a click. */
async function notFound(s: RemoteServices, intent: ChildIntent, stream: vscode.ChatResponseStream): Promise<vscode.ChatResult> {
  const newest = await s.history.currentSession({ client: 'copilot' });
  const md = new vscode.MarkdownString('VS Code has not written this chat to disk yet, so Recollect cannot see it. Nothing was archived.');
  if (newest) {
    md.appendMarkdown('\n\nThe newest chat Recollect has is ').appendText(`"${newest.title ?? newest.id}"`).appendMarkdown('. If that is this one, continue it with the button; otherwise use **Continue with chapters** in the session history once this chat shows up there.');
    stream.markdown(md);
    stream.button({ command: intent === 'fork' ? 'recollect.forkWithChapters' : 'recollect.continueWithChapters', title: `${intent === 'fork' ? 'Fork' : 'Continue'} "${(newest.title ?? newest.id).slice(0, 40)}"`, arguments: [{ sessionId: newest.id }] });
  } else {
    stream.markdown(md);
  }
  return { errorDetails: { message: 'this chat is not in the imported history yet' } };
}

function describe(r: ContinueResult): vscode.MarkdownString {
  const fresh = r.chapters.filter((c) => c.new);
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${r.intent === 'fork' ? 'Forked' : 'Continued'} with chapters.** Archived ${fresh.length} new chapter${fresh.length === 1 ? '' : 's'}; the next chat carries ${r.toc.chapters} (${r.toc.tokens.toLocaleString('en-US')} tokens archived) in a first message of ${r.budget.used.toLocaleString('en-US')} of ${r.budget.requested.toLocaleString('en-US')} tokens (preset ${r.presetUsed.name}).\n\n`);
  for (const c of r.chapters) {
    md.appendMarkdown(`- seq ${c.startSeq}–${c.endSeq} · ${c.tokens.toLocaleString('en-US')} tokens${c.new ? '' : ' · cited'} — `).appendText(c.title).appendMarkdown('\n');
  }
  for (const w of r.warnings) md.appendMarkdown('\n> ').appendText(w);
  return md;
}

async function status(deps: ChaptersHostDeps, s: RemoteServices, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
  const chat = await findThisChat(deps, s, 'status', token);
  if (!chat) {
    stream.markdown('VS Code has not written this chat to disk yet, so Recollect cannot see it; nothing of it is archived.');
    return {};
  }
  const [ceiling, chapters, lineage, children] = await Promise.all([s.chapters.ceiling(chat.id), s.chapters.chaptersOf(chat.id), s.chapters.lineage(chat.id), s.chapters.childrenOf(chat.id)]);
  const md = new vscode.MarkdownString().appendMarkdown('**This chat:** ').appendText(chat.title ?? chat.id).appendMarkdown(` (\`${chat.id}\`)\n\n`);
  if (!isRefusal(ceiling)) md.appendMarkdown(`- Archivable up to seq ${ceiling.archiveCeiling}${ceiling.openTurn ? ` (the turn from seq ${ceiling.openTurn.fromSeq} is still running)` : ''}\n`);
  md.appendMarkdown(`- ${chapters.length} chapter${chapters.length === 1 ? '' : 's'} archived${chapters.length ? `, up to seq ${Math.max(...chapters.map((c) => c.endSeq))}` : ''}\n`);
  if (lineage.openedAs) md.appendMarkdown(`- Opened as a ${lineage.openedAs.intent} of \`${lineage.openedAs.parentSessionId}\`, carrying ${lineage.openedAs.carried} chapters (lineage of ${lineage.sessions.length} sessions)\n`);
  if (children.length) md.appendMarkdown(`- ${children.length} session${children.length === 1 ? '' : 's'} opened from it (${children.filter((c) => c.linkedSessionId).length} seen since)\n`);
  stream.markdown(md);
  return {};
}

async function search(s: RemoteServices, query: string, stream: vscode.ChatResponseStream): Promise<vscode.ChatResult> {
  if (!query.trim()) {
    stream.markdown('Give words to search for, e.g. `@recollect /search sqlite lock`.');
    return {};
  }
  const r = await s.chapters.search({ query, budget: 1_500 });
  if (isRefusal(r)) {
    stream.markdown(new vscode.MarkdownString().appendText(r.reason));
    return {};
  }
  const md = new vscode.MarkdownString().appendText(r.note).appendMarkdown('\n\n');
  for (const h of r.results) md.appendMarkdown(`- **${h.kind}** ${h.date.slice(0, 10)} — `).appendText(h.title).appendMarkdown(` · \`${h.id}\`\n`);
  stream.markdown(md);
  return {};
}
