import { parseResponse, type ParamGuards, type ParamsIn, type RequestIn, type ResultIn } from './envelope';

/** What VS Code gives a webview page (acquireVsCodeApi), typed by the state the view keeps. */
export interface VsCodeApi<S> {
  postMessage(message: unknown): void;
  getState(): S | undefined;
  setState(state: S): void;
}

declare function acquireVsCodeApi<S>(): VsCodeApi<S>;

interface Pending {
  kind: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * A webview's side of its protocol: requests become promises answered by the host's matching
 * response (same id, same kind), and the host's other messages — those `parseNotice` accepts —
 * go to listeners. Anything else posted to the page (another extension, VS Code itself) is ignored.
 */
export class WebviewClient<M, S, N> {
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(notice: N) => void>();
  private nextId = 1;

  constructor(
    private readonly guards: ParamGuards<M>,
    private readonly parseNotice: (raw: unknown) => N | undefined,
    private readonly api: VsCodeApi<S> = acquireVsCodeApi<S>(),
  ) {
    window.addEventListener('message', (event: MessageEvent<unknown>) => this.receive(event.data));
  }

  request<K extends keyof M & string>(kind: K, params: ParamsIn<M, K>): Promise<ResultIn<M, K>> {
    const id = this.nextId++;
    const message = { type: 'request', id, kind, params } as RequestIn<M, K>;
    return new Promise<ResultIn<M, K>>((resolve, reject) => {
      this.pending.set(id, { kind, resolve: resolve as (result: unknown) => void, reject });
      this.api.postMessage(message);
    });
  }

  /** A message that is not a request (the memory browser's refresh). */
  post(message: object): void {
    this.api.postMessage(message);
  }

  onNotice(listener: (notice: N) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get state(): S | undefined {
    return this.api.getState();
  }

  set state(state: S) {
    this.api.setState(state);
  }

  private receive(raw: unknown): void {
    const notice = this.parseNotice(raw);
    if (notice !== undefined) {
      for (const listener of this.listeners) listener(notice);
      return;
    }
    const msg = parseResponse(this.guards, raw);
    if (!msg) return;
    const waiting = this.pending.get(msg.id);
    if (!waiting || waiting.kind !== msg.kind) return;
    this.pending.delete(msg.id);
    if (msg.ok) waiting.resolve(msg.result);
    else waiting.reject(new Error(msg.error));
  }
}
