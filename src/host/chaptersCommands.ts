import * as vscode from 'vscode';
import type { ChildIntent } from '../core/chapters/chaptersSchema';
import { isRefusal, refuse } from '../core/refusal';
import { PARTICIPANT_CLIENT, registerChatParticipant, type ChaptersHostDeps } from './chatParticipant';
import { offeringOpener, openNextSession } from './openNextSession';

/** What a row button sends: the session, and the row (event seq) to archive up to. */
export interface DoorArgs {
  sessionId: string;
  uptoSeq?: number;
  /** The handoff note; Recollect writes one from the events when it is left out. */
  note?: string;
}

const SESSION_ID = /^ses_[0-9a-f]{16}$/;
const NOTE_MAX = 40_000;

/**
 * Everything chapters needs from VS Code: the participant, the row commands the session-history
 * view calls (recollect.continueWithChapters / recollect.forkWithChapters with { sessionId,
 * uptoSeq }), reopening a child, this machine's id for rule approvals, and how a model's
 * chapters_continue offers the next chat.
 */
export function registerChapters(context: vscode.ExtensionContext, deps: ChaptersHostDeps): vscode.Disposable[] {
  // What only the store's owner holds: this window's while it owns the store (another window's otherwise, which sets the same).
  // The opener is for callers without an editor (an MCP server): a window's own tool calls open their next session in that window (toolCall.ts).
  deps.whenOwner((s) => {
    s.rules.machine.adopt(vscode.env.machineId);
    s.chapters.useOpener(offeringOpener());
  });
  return [
    registerChatParticipant(context, deps),
    vscode.commands.registerCommand('recollect.continueWithChapters', (arg: unknown) => runDoor(deps, 'continue', arg)),
    vscode.commands.registerCommand('recollect.forkWithChapters', (arg: unknown) => runDoor(deps, 'fork', arg)),
    vscode.commands.registerCommand('recollect.openNextSession', (arg: unknown) => reopen(deps, arg)),
  ];
}

/** Archives up to the row and opens the next chat; returns the result (or refusal) so a view can show it. */
async function runDoor(deps: ChaptersHostDeps, intent: ChildIntent, arg: unknown) {
  const args = parseDoorArgs(arg);
  if (isRefusal(args)) {
    void vscode.window.showErrorMessage(`Recollect: ${args.reason}`);
    return args;
  }
  const s = await deps.services;
  const result = await s.chapters.door({ sessionId: args.sessionId, uptoSeq: args.uptoSeq, note: args.note, intent, client: PARTICIPANT_CLIENT });
  if (isRefusal(result)) {
    void vscode.window.showWarningMessage(`Recollect: nothing was archived. ${result.reason}`);
    return result;
  }
  const opened = await openNextSession(result.firstMessage);
  deps.log.info(`${intent} ${args.sessionId} up to ${args.uptoSeq ?? 'the ceiling'}: child ${result.childSessionId}, ${result.chapters.filter((c) => c.new).length} new chapters; ${opened.how}`);
  for (const w of result.warnings) deps.log.warn(`${result.childSessionId}: ${w}`);
  return { ...result, opened };
}

async function reopen(deps: ChaptersHostDeps, arg: unknown) {
  const id = typeof arg === 'object' && arg !== null ? (arg as { childSessionId?: unknown }).childSessionId : undefined;
  const next = typeof id === 'string' ? await (await deps.services).chapters.firstMessageOf(id) : undefined;
  if (!next) {
    void vscode.window.showErrorMessage('Recollect: that session is not known here.');
    return refuse('unknown childSessionId');
  }
  return openNextSession(next.firstMessage);
}

/** Command arguments come from webviews and other extensions: checked, never trusted. */
export function parseDoorArgs(arg: unknown): DoorArgs | ReturnType<typeof refuse> {
  if (typeof arg !== 'object' || arg === null) return refuse('expected { sessionId, uptoSeq? }');
  const { sessionId, uptoSeq, note } = arg as Record<string, unknown>;
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) return refuse('sessionId must be a session id such as ses_0123456789abcdef');
  if (uptoSeq !== undefined && !(typeof uptoSeq === 'number' && Number.isInteger(uptoSeq) && uptoSeq >= 1)) return refuse('uptoSeq must be a positive whole number (an event seq)');
  if (note !== undefined && (typeof note !== 'string' || note.length > NOTE_MAX)) return refuse(`note must be text of at most ${NOTE_MAX} characters`);
  return { sessionId, ...(uptoSeq !== undefined ? { uptoSeq } : {}), ...(note !== undefined ? { note } : {}) };
}
