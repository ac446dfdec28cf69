/**
 * The memory browser's message protocol: the only shapes that cross between the extension
 * host and the webview. Both sides import this file, so a renamed field breaks the build on
 * both at once. Wire types are the view's own (not core's) so the webview bundle never pulls
 * in engine code, and the host maps core results onto them where the compiler can check it.
 * The envelope (ids, kinds, ok/error, the checks on arrival) is the one all views share.
 */

import { isRecord, optionalString, parseRequest, parseResponse, type HandlersFor, type ParamGuards, type ParamsIn, type RequestIn, type ResponseIn, type ResultIn } from './envelope';

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

export interface FactVersion {
  id: string;
  predicate: string;
  object: string;
  scope: string;
  source: string;
  recorded_at: string;
  status: 'current' | 'historical';
  superseded_at: string | null;
}

export interface HistoryResult {
  subject: string;
  values: FactVersion[];
}

/** Every request kind: what the webview sends and what it gets back. */
export interface RequestMap {
  status: { params: Record<string, never>; result: MemoryStatus };
  search: { params: { query: string; scope?: string }; result: SearchResult };
  recent: { params: { limit: number }; result: { items: MemoryItem[] } };
  retrieve: { params: { subject: string }; result: HistoryResult };
}

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
