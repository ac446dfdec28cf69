import { dispatchRequest, type HandlersFor, type RequestIn, type ResponseIn } from '../../webview/shared/envelope';

// No `vscode` here: the webview tests answer a real Chromium page through this same path.

/** A refusal from the engine is an answer the view shows, not a crash; it travels as an error. */
export class RefusedError extends Error {}

/**
 * Answers what a webview posted: its protocol's parser decides whether it is a request at all
 * (junk is dropped, never trusted), the handler runs, and a failure becomes an error response
 * rather than a view left waiting. Handlers may still be waiting on the store to open; if it
 * failed, every request is answered with the reason.
 */
export async function answerRequest<M>(
  parse: (raw: unknown) => RequestIn<M> | undefined,
  raw: unknown,
  handlers: HandlersFor<M> | Promise<HandlersFor<M>>,
): Promise<ResponseIn<M> | undefined> {
  const req = parse(raw);
  if (!req) return undefined;
  try {
    return await dispatchRequest(await handlers, req);
  } catch (err) {
    const error = err instanceof RefusedError ? err.message : `Recollect could not answer: ${err instanceof Error ? err.message : String(err)}`;
    return { type: 'response', id: req.id, kind: req.kind, ok: false, error } as ResponseIn<M>;
  }
}
