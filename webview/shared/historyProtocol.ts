/**
 * The session-history panel's protocol: the only shapes that cross between the extension host
 * and the panel. Both sides import this file; the host checks every inbound message with the
 * guards below before anything runs.
 */

// Type-only, so no engine code reaches the bundle: the panel shows core's session rows as they are.
import type { BrowsedSession } from '../../src/core/history/sessionBrowse';
import { isRecord, isWholeNumber, onlyKeys, parseRequest, type HandlersFor, type ParamGuards, type ParamsIn, type RequestIn, type ResponseIn } from './envelope';

export const SESSION_ID = /^ses_[0-9a-f]{16}$/;
/** Dates in filters are calendar days as an <input type="date"> gives them. */
export const DAY = /^\d{4}-\d{2}-\d{2}$/;
export const QUERY_MAX = 300;
export const SESSIONS_MAX = 500;

export interface SessionFilters {
  source?: string;
  workspace?: string;
  /** First day included (YYYY-MM-DD, local time). */
  since?: string;
  /** Last day included (YYYY-MM-DD, local time). */
  until?: string;
  /** Words searched through the history index (the one scorer); empty lists sessions by recency. */
  query?: string;
}

/** A session as core's browse lists it, plus what a search adds. */
export interface SessionSummary extends BrowsedSession {
  /** With a search: the best matching excerpt, matched words marked as [word]. */
  snippet?: string;
  /** With a search: how many of the matching events are in this session. */
  matches?: number;
}

export interface Facet {
  name: string;
  sessions: number;
}

export interface SessionList {
  sessions: SessionSummary[];
  /** Sessions matching the filters (more than `sessions` holds when the list was capped). */
  total: number;
  sources: Facet[];
  workspaces: Facet[];
  /** Says how the list was made: by recency, or by search and over how many matching events. */
  note: string;
}

export type RowKind = 'user' | 'assistant' | 'reasoning' | 'tool' | 'tool_result' | 'other';

/**
 * One row of a session. A tool call and its result are one row (`result` names the result
 * event); reasoning, tool calls and other records are collapsed until opened.
 */
export interface Row {
  seq: number;
  kind: RowKind;
  /** The source's own kind for `other` rows (system, summary, unknown). */
  rawKind?: string;
  at: string | null;
  /** The start of the text; the whole of it comes with a `rowText` request. */
  preview: string;
  bytes: number;
  toolName?: string;
  isError?: boolean;
  result?: { seq: number; bytes: number; isError: boolean };
}

export interface ChapterSpan {
  id: string;
  title: string;
  summary: string;
  startSeq: number;
  endSeq: number;
  tokens: number;
  sha256: string;
}

export interface ChildSummary {
  id: string;
  intent: 'continue' | 'fork';
  uptoSeq: number | null;
  createdAt: string;
  linkedSessionId: string | null;
}

export interface SessionDetail {
  session: SessionSummary;
  rows: Row[];
  chapters: ChapterSpan[];
  /** Rows above archiveCeiling cannot be archived yet; openTurn says why. */
  ceiling: { archiveCeiling: number; openTurn: { fromSeq: number; reason: string } | null };
  children: ChildSummary[];
}

export interface RowText {
  seq: number;
  text: string;
  bytes: number;
  /** The text was cut at the view's limit; `bytes` is the whole. */
  truncated: boolean;
  /** A tool call's result, when the row is one. */
  result?: { seq: number; text: string; bytes: number; truncated: boolean; isError: boolean };
}

export type DoorIntent = 'continue' | 'fork';

export type DoorOutcome =
  | { ok: true; childSessionId: string; chapters: number; newChapters: number; opened: boolean; how: string; warnings: string[] }
  | { ok: false; reason: string };

export interface RequestMap {
  /** What the panel was opened for (a command argument), told once; then it follows its saved state. */
  opening: { params: Record<string, never>; result: { sessionId?: string; seq?: number } };
  sessions: { params: SessionFilters; result: SessionList };
  session: { params: { sessionId: string }; result: SessionDetail };
  rowText: { params: { sessionId: string; seq: number }; result: RowText };
  /** A person's click on Continue/Fork with chapters on an assistant row: archive up to that row. */
  door: { params: { intent: DoorIntent; sessionId: string; uptoSeq: number }; result: DoorOutcome };
  /** Opens an http(s) link from a transcript through VS Code (which asks before leaving). */
  openLink: { params: { url: string }; result: { opened: boolean } };
}

export type HistoryKind = keyof RequestMap & string;
export type HistoryParams<K extends HistoryKind> = ParamsIn<RequestMap, K>;
export type HistoryRequest = RequestIn<RequestMap>;
export type HistoryResponse = ResponseIn<RequestMap>;
export type HistoryHandlers = HandlersFor<RequestMap>;

/** Host → panel besides responses: open this session (the command ran while the panel was open). */
export type HistoryNotice = { type: 'reveal'; sessionId: string; seq?: number };
export type HistoryHostMessage = HistoryResponse | HistoryNotice;

const sessionId = (v: unknown) => typeof v === 'string' && SESSION_ID.test(v);
const day = (v: unknown) => v === undefined || (typeof v === 'string' && DAY.test(v));
const short = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length <= max);

export const HISTORY_GUARDS: ParamGuards<RequestMap> = {
  opening: (p): p is HistoryParams<'opening'> => onlyKeys(p, []),
  sessions: (p): p is SessionFilters =>
    onlyKeys(p, ['source', 'workspace', 'since', 'until', 'query']) && short(p.source, 100) && short(p.workspace, 4096) && day(p.since) && day(p.until) && short(p.query, QUERY_MAX),
  session: (p): p is HistoryParams<'session'> => onlyKeys(p, ['sessionId']) && sessionId(p.sessionId),
  rowText: (p): p is HistoryParams<'rowText'> => onlyKeys(p, ['sessionId', 'seq']) && sessionId(p.sessionId) && isWholeNumber(p.seq, 1),
  door: (p): p is HistoryParams<'door'> =>
    onlyKeys(p, ['intent', 'sessionId', 'uptoSeq']) && (p.intent === 'continue' || p.intent === 'fork') && sessionId(p.sessionId) && isWholeNumber(p.uptoSeq, 1),
  openLink: (p): p is HistoryParams<'openLink'> => onlyKeys(p, ['url']) && typeof p.url === 'string' && isWebLink(p.url),
};

/** Only http and https leave the panel; javascript:, file:, command: and the rest stay text. */
export function isWebLink(url: string): boolean {
  if (url.length > 2048) return false;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function parseHistoryRequest(raw: unknown): HistoryRequest | undefined {
  return parseRequest(HISTORY_GUARDS, raw);
}

export function parseHistoryNotice(raw: unknown): HistoryNotice | undefined {
  if (!isRecord(raw) || raw.type !== 'reveal' || !sessionId(raw.sessionId) || !(raw.seq === undefined || isWholeNumber(raw.seq, 1))) return undefined;
  return { type: 'reveal', sessionId: raw.sessionId as string, ...(raw.seq !== undefined ? { seq: raw.seq as number } : {}) };
}
