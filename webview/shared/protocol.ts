/**
 * The memory browser's message protocol: the only shapes that cross between the extension
 * host and the webview. Both sides import this file, so a renamed field breaks the build on
 * both at once. Wire types are the view's own (not core's) so the webview bundle never pulls
 * in engine code, and the host maps core results onto them where the compiler can check it.
 */

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
export type ParamsOf<K extends RequestKind> = RequestMap[K]['params'];
export type ResultOf<K extends RequestKind> = RequestMap[K]['result'];

export type RequestOf<K extends RequestKind> = { [P in K]: { type: 'request'; id: number; kind: P; params: ParamsOf<P> } }[K];
export type Request = RequestOf<RequestKind>;

export type ResponseOf<K extends RequestKind> = {
  [P in K]: { type: 'response'; id: number; kind: P; ok: true; result: ResultOf<P> } | { type: 'response'; id: number; kind: P; ok: false; error: string };
}[K];
export type Response = ResponseOf<RequestKind>;

/** Webview → host: a request, or a plea to be told about changes now (the refresh button). */
export type WebviewMessage = Request | { type: 'refresh' };

/** Host → webview: an answer, or word that the store changed and what is shown may be stale. */
export type HostMessage = Response | { type: 'changed' };

/** Per-request handlers, one per kind, so the host cannot forget or mistype one. */
export type RequestHandlers = { [K in RequestKind]: (params: ParamsOf<K>) => ResultOf<K> | Promise<ResultOf<K>> };

type Guard<T> = (value: unknown) => value is T;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optionalString = (v: unknown) => v === undefined || typeof v === 'string';

const PARAM_GUARDS: { [K in RequestKind]: Guard<ParamsOf<K>> } = {
  status: (p): p is ParamsOf<'status'> => isRecord(p),
  search: (p): p is ParamsOf<'search'> => isRecord(p) && typeof p.query === 'string' && optionalString(p.scope),
  recent: (p): p is ParamsOf<'recent'> => isRecord(p) && typeof p.limit === 'number' && Number.isInteger(p.limit),
  retrieve: (p): p is ParamsOf<'retrieve'> => isRecord(p) && typeof p.subject === 'string',
};

function isRequestKind(kind: unknown): kind is RequestKind {
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(PARAM_GUARDS, kind);
}

/** Checks what arrived from the webview; anything malformed is dropped rather than trusted. */
export function parseWebviewMessage(raw: unknown): WebviewMessage | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.type === 'refresh') return { type: 'refresh' };
  if (raw.type !== 'request' || typeof raw.id !== 'number' || !isRequestKind(raw.kind)) return undefined;
  const guard: Guard<unknown> = PARAM_GUARDS[raw.kind];
  if (!guard(raw.params)) return undefined;
  return raw as Request;
}

/** Checks what arrived from the host; other extensions' or VS Code's own messages are ignored. */
export function parseHostMessage(raw: unknown): HostMessage | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.type === 'changed') return { type: 'changed' };
  if (raw.type !== 'response' || typeof raw.id !== 'number' || !isRequestKind(raw.kind) || typeof raw.ok !== 'boolean') return undefined;
  if (raw.ok ? !('result' in raw) : typeof raw.error !== 'string') return undefined;
  return raw as Response;
}
