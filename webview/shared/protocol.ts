/**
 * The memory browser's message protocol: the only shapes that cross between the extension
 * host and the webview. Both sides import this file, so a renamed field breaks the build on
 * both at once. Wire types are the view's own (not core's) so the webview bundle never pulls
 * in engine code, and the host maps core results onto them where the compiler can check it.
 * The envelope (ids, kinds, ok/error, the checks on arrival) is the one all views share.
 */

import { isRecord, onlyKeys, optionalString, parseRequest, parseResponse, type HandlersFor, type ParamGuards, type ParamsIn, type RequestIn, type ResponseIn, type ResultIn } from './envelope';
import { SESSION_ID } from './historyProtocol';
// Type-only, so src/server/protocol.ts is erased from the bundle and no host code comes with it.
import type { FactVersion } from '../../src/server/protocol';
import type { EntitySummary, LogEntry, RetiredSummary, VaultNote } from '../../src/core/memory/memoryBrowse';
import type { ErrorRecord } from '../../src/core/errors/errorService';
import type { ActivityRow } from '../../src/core/activity/activityRow';

export interface MemoryStatus {
  facts: number;
  current_facts: number;
  /** Note entries (lines in daily notes); `note_files` counts the daily files they live in. */
  entries: number;
  note_files: number;
  entities: number;
  semantic: boolean;
  semantic_reason: string | null;
  warnings: string[];
}

export interface FactParts {
  subject: string;
  predicate: string;
  object: string;
}

interface ItemBase {
  id: string;
  text: string;
  scope: string;
  created_at: string;
}

/** A fact carries its parts so the view can ask for the subject's history without parsing text. */
export type MemoryItem = (ItemBase & { kind: 'fact'; fact: FactParts }) | (ItemBase & { kind: 'note' });

/** `snippet` marks each matched word as [word]. */
export type SearchHit = MemoryItem & { snippet: string };

export interface SearchResult {
  query: string;
  hits: SearchHit[];
  total: number;
}

// The notes language server's hover shows the same fact history: one shape keeps the two alike.
export type { FactVersion, LogEntry };
/** The browser's rows for notes, entities and retired items are the engine's own shapes. */
export type NoteItem = VaultNote;
export type EntityItem = EntitySummary;
export type RetiredItem = RetiredSummary;

export interface HistoryResult {
  subject: string;
  values: FactVersion[];
}

/** A section's first rows and how many there are in all. */
export interface Listed<T> {
  items: T[];
  total: number;
}

/** A tool failure and the fix that worked (error memory), as the engine records it. */
export type ErrorFix = Omit<ErrorRecord, 'outcome' | 'first_recorded_at'>;

export interface RuleSummary {
  id: string;
  text: string;
  status: 'pending' | 'approved' | 'rejected';
  scope: string;
  target: string;
  category: string;
  proposedBy: string;
  proposedAt: string;
}

export type AgentRequestStatus = 'open' | 'answered' | 'closed';

/** A request between agents. Both texts were written by agents: the view shows them as inert text. */
export interface AgentRequest {
  id: string;
  from: string;
  to: string;
  status: AgentRequestStatus;
  scope: string;
  asked_at: string;
  request: string;
  /** Present when `request` is an excerpt: the whole text's length in characters. */
  request_chars?: number;
  answer: string | null;
  answered_at: string | null;
  closed_at: string | null;
}

export interface SessionItem {
  id: string;
  source: string;
  title: string | null;
  workspace: string | null;
  updatedAt: string | null;
  runs: number;
  events: number;
}

/** One of Recollect's own tool calls, from the activity log beside the store (never part of what is recalled). */
export type ActivityItem = ActivityRow;

/** Everything the browser's sections show besides facts: one request, so the sections agree with each other. */
export interface Overview {
  errors: Listed<ErrorFix>;
  rules: Listed<RuleSummary> & { pending: number };
  requests: Listed<AgentRequest> & { counts: Record<AgentRequestStatus, number> };
  sessions: Listed<SessionItem>;
  log: Listed<LogEntry>;
  notes: Listed<NoteItem>;
  entities: Listed<EntityItem>;
  retired: Listed<RetiredItem>;
  activity: Listed<ActivityItem>;
}

/**
 * What became of a retire or restore the view asked for: done, cancelled (the person dismissed
 * the confirmation: nothing changed) or refused (the engine's reason, shown to the person).
 */
export interface ChangeOutcome {
  outcome: 'done' | 'cancelled' | 'refused';
  message: string;
}

/** Where something lives: a vault file (a note, or an entry's day log), a session, the rule review. */
export type OpenTarget = { kind: 'vault'; path: string } | { kind: 'session'; sessionId: string } | { kind: 'rules' };

/** Every request kind: what the webview sends and what it gets back. */
export interface RequestMap {
  status: { params: Record<string, never>; result: MemoryStatus };
  search: { params: { query: string; scope?: string }; result: SearchResult };
  recent: { params: { limit: number }; result: { items: MemoryItem[] } };
  retrieve: { params: { subject: string }; result: HistoryResult };
  overview: { params: Record<string, never>; result: Overview };
  /** The host asks the person first (a modal); the view sends only the id. */
  retire: { params: { id: string }; result: ChangeOutcome };
  restore: { params: { id: string }; result: ChangeOutcome };
  open: { params: OpenTarget; result: { opened: boolean; reason?: string } };
}

export const MEMORY_ID = /^(fact:\S{1,100}|entry:.{1,600}|note:.{1,600})$/;
const memoryId = (v: unknown) => typeof v === 'string' && v.length <= 700 && MEMORY_ID.test(v);

export type RequestKind = keyof RequestMap;
export type ParamsOf<K extends RequestKind> = ParamsIn<RequestMap, K>;
export type ResultOf<K extends RequestKind> = ResultIn<RequestMap, K>;
export type RequestOf<K extends RequestKind> = RequestIn<RequestMap, K>;
export type Request = RequestOf<RequestKind>;
export type ResponseOf<K extends RequestKind> = ResponseIn<RequestMap, K>;
export type Response = ResponseOf<RequestKind>;

/** Webview → host: a request, or a plea to be told about changes now (the refresh button). */
export type WebviewMessage = Request | { type: 'refresh' };

/** Host → webview: an answer, or word that the store changed and what is shown may be stale. */
export type HostMessage = Response | { type: 'changed' };

/** Per-request handlers, one per kind, so the host cannot forget or mistype one. */
export type RequestHandlers = HandlersFor<RequestMap>;

export const PARAM_GUARDS: ParamGuards<RequestMap> = {
  status: (p): p is ParamsOf<'status'> => isRecord(p),
  search: (p): p is ParamsOf<'search'> => isRecord(p) && typeof p.query === 'string' && optionalString(p.scope),
  recent: (p): p is ParamsOf<'recent'> => isRecord(p) && typeof p.limit === 'number' && Number.isInteger(p.limit),
  retrieve: (p): p is ParamsOf<'retrieve'> => isRecord(p) && typeof p.subject === 'string',
  overview: (p): p is ParamsOf<'overview'> => onlyKeys(p, []),
  retire: (p): p is ParamsOf<'retire'> => onlyKeys(p, ['id']) && memoryId(p.id),
  restore: (p): p is ParamsOf<'restore'> => onlyKeys(p, ['id']) && memoryId(p.id),
  open: (p): p is OpenTarget =>
    (onlyKeys(p, ['kind', 'path']) && p.kind === 'vault' && typeof p.path === 'string' && p.path.length > 0 && p.path.length <= 600) ||
    (onlyKeys(p, ['kind', 'sessionId']) && p.kind === 'session' && typeof p.sessionId === 'string' && SESSION_ID.test(p.sessionId)) ||
    (onlyKeys(p, ['kind']) && p.kind === 'rules'),
};

/** Checks what arrived from the webview; anything malformed is dropped rather than trusted. */
export function parseWebviewMessage(raw: unknown): WebviewMessage | undefined {
  if (isRecord(raw) && raw.type === 'refresh') return { type: 'refresh' };
  return parseRequest(PARAM_GUARDS, raw);
}

/** Checks what arrived from the host; other extensions' or VS Code's own messages are ignored. */
export function parseHostMessage(raw: unknown): HostMessage | undefined {
  if (isRecord(raw) && raw.type === 'changed') return { type: 'changed' };
  return parseResponse(PARAM_GUARDS, raw);
}
