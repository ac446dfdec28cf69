/**
 * What the notes language server asks the extension host, and what it is told. The server
 * holds no store of its own: every name, id and fact comes over these requests, answered from
 * the extension's one open store. Both sides import this file (it imports nothing), so a
 * renamed field breaks the build on both at once.
 */

export const ID_KINDS = ['fact', 'entry', 'note'] as const;
export type IdKind = (typeof ID_KINDS)[number];

export interface NameQuery {
  /** What was typed so far; case and spacing are ignored. */
  prefix: string;
  limit: number;
}

export interface NameList {
  items: { name: string; count: number }[];
  /** More names start with the prefix than were returned. */
  more: boolean;
}

export interface IdQuery {
  kind: IdKind;
  /** What follows `<kind>:` so far. */
  prefix: string;
  limit: number;
}

export interface IdList {
  /** Full ids (`fact:…`, `entry:…`, `note:…`) with a line of what each holds. */
  items: { id: string; detail: string }[];
  more: boolean;
}

export interface FactQuery {
  /** A `fact:<id>`: the card shows that fact's subject+predicate+scope history. */
  id?: string;
  /** Phrases around the cursor, best first: the first that facts are about wins. */
  subjects?: string[];
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

export interface FactCard {
  subject: string;
  /** Current values first, then what they replaced, newest first. */
  values: FactVersion[];
  /** Set when the card was asked for by id. */
  id?: string;
}

export interface ResolveQuery {
  ids: string[];
}

export interface IdTarget {
  id: string;
  exists: boolean;
  /** Taken out of recall (retire_memory, or its block deleted from a file); restore_memory brings it back. */
  retired?: boolean;
  /** Absolute path of the vault file the id lives in, when it has one on disk. */
  file?: string;
  /** 0-based line in `file`. */
  line?: number;
  detail?: string;
}

/** Request method → parameters and result. The host answers every one of these. */
export interface HostRequests {
  'recollect/entities': { params: NameQuery; result: NameList };
  'recollect/predicates': { params: NameQuery; result: NameList };
  'recollect/ids': { params: IdQuery; result: IdList };
  'recollect/fact': { params: FactQuery; result: FactCard | null };
  'recollect/resolveIds': { params: ResolveQuery; result: { results: IdTarget[] } };
}

export type HostMethod = keyof HostRequests;
export type ParamsOf<M extends HostMethod> = HostRequests[M]['params'];
export type ResultOf<M extends HostMethod> = HostRequests[M]['result'];
export type HostHandlers = { [M in HostMethod]: (params: ParamsOf<M>) => ResultOf<M> | Promise<ResultOf<M>> };

export const HOST_METHODS: readonly HostMethod[] = ['recollect/entities', 'recollect/predicates', 'recollect/ids', 'recollect/fact', 'recollect/resolveIds'];

/** Host → server: memory changed (another process may have written), so ids are checked again. */
export const STORE_CHANGED = 'recollect/storeChanged';

/** Sent as the LSP `initializationOptions`: limits the store enforces, so the server checks the same. */
export interface ServerInitOptions {
  /** Longest statement (or note line) the store accepts, in UTF-16 code units. */
  statementMax: number;
  /** Named in messages, so a person knows which store was asked. */
  storeHome: string;
}

/** Most ids a single resolve request carries; a larger document is checked in several. */
export const RESOLVE_BATCH = 200;
