/**
 * The request/response envelope every Recollect webview speaks. A view's protocol file names
 * its request kinds (a RequestMap: kind → params and result) and one guard per kind; this
 * module turns that into the typed messages and the checks both sides run on what arrives.
 * Nothing here knows a particular view, so the three views cannot drift apart on the envelope.
 */

export interface RequestSpec {
  params: unknown;
  result: unknown;
}

export type Guard<T> = (value: unknown) => value is T;

export type ParamsIn<M, K extends keyof M> = M[K] extends RequestSpec ? M[K]['params'] : never;
export type ResultIn<M, K extends keyof M> = M[K] extends RequestSpec ? M[K]['result'] : never;

export type RequestIn<M, K extends keyof M & string = keyof M & string> = {
  [P in K]: { type: 'request'; id: number; kind: P; params: ParamsIn<M, P> };
}[K];

export type ResponseIn<M, K extends keyof M & string = keyof M & string> = {
  [P in K]: { type: 'response'; id: number; kind: P; ok: true; result: ResultIn<M, P> } | { type: 'response'; id: number; kind: P; ok: false; error: string };
}[K];

/** One handler per kind, so a host cannot forget or mistype one. */
export type HandlersFor<M> = { [K in keyof M]: (params: ParamsIn<M, K>) => ResultIn<M, K> | Promise<ResultIn<M, K>> };

/** One guard per kind: the host trusts a request's params only after its guard said yes. */
export type ParamGuards<M> = { [K in keyof M]: Guard<ParamsIn<M, K>> };

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
export const isWholeNumber = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min;

/**
 * A record holding only the named keys (any may be absent): a message with a field the view
 * never sends — rule text on an approval, say — is not one of ours and is dropped.
 */
export function onlyKeys(v: unknown, keys: readonly string[]): v is Record<string, unknown> {
  return isRecord(v) && Object.keys(v).every((k) => keys.includes(k));
}

function isKind<M>(guards: ParamGuards<M>, kind: unknown): kind is keyof M & string {
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(guards, kind);
}

/** Checks a request from the webview: a known kind, a numeric id and params its guard accepts. */
export function parseRequest<M>(guards: ParamGuards<M>, raw: unknown): RequestIn<M> | undefined {
  if (!isRecord(raw) || raw.type !== 'request' || !isWholeNumber(raw.id) || !isKind(guards, raw.kind)) return undefined;
  const guard: Guard<unknown> = guards[raw.kind];
  if (!guard(raw.params)) return undefined;
  return raw as RequestIn<M>;
}

/**
 * Checks a response from the host. Results are not re-validated here: the webview matches a
 * response to the request it sent by id and kind, and the host built it from typed code.
 */
export function parseResponse<M>(guards: ParamGuards<M>, raw: unknown): ResponseIn<M> | undefined {
  if (!isRecord(raw) || raw.type !== 'response' || !isWholeNumber(raw.id) || !isKind(guards, raw.kind) || typeof raw.ok !== 'boolean') return undefined;
  if (raw.ok ? !('result' in raw) : typeof raw.error !== 'string') return undefined;
  return raw as ResponseIn<M>;
}

/** Runs the request's handler; kind and result stay correlated only inside a generic call. */
export async function dispatchRequest<M, K extends keyof M & string>(handlers: HandlersFor<M>, req: RequestIn<M, K>): Promise<ResponseIn<M, K>> {
  const handler: HandlersFor<M>[K] = handlers[req.kind];
  const result: ResultIn<M, K> = await handler(req.params);
  return { type: 'response', id: req.id, kind: req.kind, ok: true, result } as ResponseIn<M, K>;
}
