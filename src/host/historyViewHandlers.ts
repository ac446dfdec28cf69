import type { ContinueResult } from '../core/chapters/archive';
import type { BrowsedRow, BrowsedSession } from '../core/history/sessionBrowse';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { isRefusal, type Refusal } from '../core/refusal';
import {
  SESSIONS_MAX,
  parseHistoryRequest,
  type DoorIntent,
  type DoorOutcome,
  type HistoryHandlers,
  type HistoryResponse,
  type Row,
  type RowKind,
  type SessionFilters,
  type SessionSummary,
} from '../../webview/shared/historyProtocol';
import { RefusedError, answerRequest } from './webviewRpc';

// No `vscode` here: the webview tests answer a real Chromium page with these same handlers.

/** Enough of each event for a row's three lines; the rest comes when a row is opened. */
export const PREVIEW_CHARS = 280;
/** An opened row shows this much; a larger output says so and chapters_artifact reads the rest. */
export const ROW_TEXT_MAX = 200_000;
/** Matching events a search looks at before grouping them by session. */
const SEARCH_EVENTS = 400;
const DAY_MS = 86_400_000;

/** What recollect.continueWithChapters / forkWithChapters answer (src/host/chaptersCommands.ts). */
export type DoorCommandResult = Refusal | (ContinueResult & { opened: { opened: boolean; how: string } });

/** What the panel needs from VS Code, so the same handlers run in the webview tests. */
export interface HistoryPorts {
  /** Runs the row command (in VS Code: recollect.continueWithChapters or recollect.forkWithChapters). */
  runDoor(intent: DoorIntent, args: { sessionId: string; uptoSeq: number }): Promise<DoorCommandResult | undefined>;
  /** Opens an http(s) link outside (VS Code asks the person first). */
  openExternal(url: string): Promise<boolean>;
  /** What the panel was opened for, told once. */
  takeOpening(): { sessionId?: string; seq?: number };
}

export function historyViewHandlers(services: RemoteServices, ports: HistoryPorts): HistoryHandlers {
  const browse = services.sessions;
  const known = async (sessionId: string): Promise<BrowsedSession> => {
    const found = (await browse.summaries([sessionId]))[0];
    if (!found) throw new RefusedError(`no imported session ${sessionId}: it may have been removed; pick another from the list`);
    return found;
  };
  return {
    opening: () => ports.takeOpening(),
    sessions: (filters) => listSessions(services, filters),
    async session({ sessionId }) {
      const session = await known(sessionId);
      const [ceiling, rows, chapters, children] = await Promise.all([services.chapters.ceiling(sessionId), browse.rows(sessionId, PREVIEW_CHARS), services.chapters.chaptersOf(sessionId), services.chapters.childrenOf(sessionId)]);
      if (isRefusal(ceiling)) throw new RefusedError(ceiling.reason);
      return {
        session: summary(session),
        rows: rows.map(toRow),
        chapters: chapters.map((c) => ({ id: c.id, title: c.title, summary: c.summary, startSeq: c.startSeq, endSeq: c.endSeq, tokens: c.tokens, sha256: c.sha256 })),
        ceiling: { archiveCeiling: ceiling.archiveCeiling, openTurn: ceiling.openTurn ? { fromSeq: ceiling.openTurn.fromSeq, reason: ceiling.openTurn.reason } : null },
        children: children.map((c) => ({ id: c.id, intent: c.intent, uptoSeq: c.uptoSeq, createdAt: new Date(c.createdAt).toISOString(), linkedSessionId: c.linkedSessionId })),
      };
    },
    async rowText({ sessionId, seq }) {
      const event = await browse.eventText(sessionId, seq, ROW_TEXT_MAX);
      if (!event) throw new RefusedError(`session ${sessionId} has no event ${seq}`);
      const resultSeq = event.kind === 'tool_call' && event.callId ? await browse.resultOf(sessionId, event.callId) : undefined;
      const result = resultSeq === undefined ? undefined : await browse.eventText(sessionId, resultSeq, ROW_TEXT_MAX);
      return {
        seq: event.seq,
        text: event.text,
        bytes: event.bytes,
        truncated: event.truncated,
        ...(result ? { result: { seq: result.seq, text: result.text, bytes: result.bytes, truncated: result.truncated, isError: result.isError } } : {}),
      };
    },
    door: (params) => door(services, ports, params),
    async openLink({ url }) {
      return { opened: await ports.openExternal(url) };
    },
  };
}

/** The host's side of the panel's messages; junk is dropped, failures become error responses. */
export function answerHistoryMessage(raw: unknown, handlers: HistoryHandlers | Promise<HistoryHandlers>): Promise<HistoryResponse | undefined> {
  return answerRequest(parseHistoryRequest, raw, handlers);
}

/**
 * Checked here before the command runs, so a message naming a row that is not an assistant
 * reply, or one above the archive ceiling, is answered with the reason and nothing is archived.
 */
async function door(services: RemoteServices, ports: HistoryPorts, p: { intent: DoorIntent; sessionId: string; uptoSeq: number }): Promise<DoorOutcome> {
  const ceiling = await services.chapters.ceiling(p.sessionId);
  if (isRefusal(ceiling)) return { ok: false, reason: ceiling.reason };
  if ((await services.sessions.kindAt(p.sessionId, p.uptoSeq)) !== 'assistant') return { ok: false, reason: `seq ${p.uptoSeq} is not an assistant reply in ${p.sessionId}; a session is archived up to a reply. Nothing was archived.` };
  if (p.uptoSeq > ceiling.archiveCeiling) {
    const why = ceiling.openTurn ? ` (${ceiling.openTurn.reason})` : '';
    return { ok: false, reason: `seq ${p.uptoSeq} is above the archive ceiling ${ceiling.archiveCeiling}: it is in an unfinished turn${why}. Nothing was archived.` };
  }
  const result = await ports.runDoor(p.intent, { sessionId: p.sessionId, uptoSeq: p.uptoSeq });
  if (!result) return { ok: false, reason: 'the command did not answer; see the Recollect log' };
  if (isRefusal(result)) return { ok: false, reason: result.reason };
  return {
    ok: true,
    childSessionId: result.childSessionId,
    chapters: result.chapters.length,
    newChapters: result.chapters.filter((c) => c.new).length,
    opened: result.opened.opened,
    how: result.opened.how,
    warnings: result.warnings,
  };
}

async function listSessions(services: RemoteServices, f: SessionFilters) {
  const browse = services.sessions;
  const since = f.since ? startOfDay(f.since) : undefined;
  const before = f.until ? startOfDay(f.until) + DAY_MS : undefined;
  const facets = await browse.facets();
  const query = f.query?.trim();
  if (!query) {
    const { sessions, total } = await browse.list({ source: f.source, workspace: f.workspace, since, before, limit: SESSIONS_MAX });
    const capped = total > sessions.length ? ` (the newest ${sessions.length} shown; narrow the filters to see older ones)` : '';
    return { sessions: sessions.map(summary), total, ...facets, note: `${total} session${total === 1 ? '' : 's'}, most recently active first${capped}` };
  }
  const found = await services.history.search({ query, limit: SEARCH_EVENTS, sort: 'relevance', source: f.source, since, before });
  if (isRefusal(found)) throw new RefusedError(found.reason);
  // Hits arrive best first: a session ranks by its best event, and keeps that event's excerpt.
  const bySession = new Map<string, { snippet: string; matches: number }>();
  for (const h of found.hits) {
    const seen = bySession.get(h.session_id);
    if (seen) seen.matches++;
    else bySession.set(h.session_id, { snippet: h.snippet, matches: 1 });
  }
  const sessions = (await browse.summaries([...bySession.keys()], { workspace: f.workspace })).map((s) => ({ ...summary(s), ...bySession.get(s.id) }));
  const looked = found.total > found.shown ? `the best ${found.shown} of ${found.total} matching events` : `${found.total} matching event${found.total === 1 ? '' : 's'}`;
  return { sessions, total: sessions.length, ...facets, note: `${sessions.length} session${sessions.length === 1 ? '' : 's'} hold ${looked}, best match first` };
}

function summary(s: BrowsedSession): SessionSummary {
  return { id: s.id, source: s.source, title: s.title, workspace: s.workspace, startedAt: s.startedAt, updatedAt: s.updatedAt, events: s.events, chapters: s.chapters };
}

const ROW_KINDS: Record<string, RowKind> = { user: 'user', assistant: 'assistant', reasoning: 'reasoning', tool_call: 'tool', tool_result: 'tool_result' };

function toRow(r: BrowsedRow): Row {
  const kind = ROW_KINDS[r.kind] ?? 'other';
  return {
    seq: r.seq,
    kind,
    ...(kind === 'other' ? { rawKind: r.kind } : {}),
    at: r.at,
    preview: r.preview,
    bytes: r.bytes,
    ...(r.toolName ? { toolName: r.toolName } : {}),
    ...(r.isError ? { isError: true } : {}),
    ...(r.result ? { result: r.result } : {}),
  };
}

/** A day from an <input type="date">, as the start of that day where the person is. */
function startOfDay(day: string): number {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y ?? 1970, (m ?? 1) - 1, d ?? 1).getTime();
}
