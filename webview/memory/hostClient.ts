import { parseHostMessage, type ParamsOf, type RequestKind, type RequestOf, type ResultOf, type WebviewMessage } from '../shared/protocol';

/** What the view keeps across being hidden and shown (VS Code discards the page meanwhile). */
export interface ViewState {
  query: string;
}

interface VsCodeApi {
  // Generic so a request built for one kind is accepted as it is, without widening casts.
  postMessage<K extends RequestKind>(message: RequestOf<K> | Exclude<WebviewMessage, { type: 'request' }>): void;
  getState(): ViewState | undefined;
  setState(state: ViewState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

interface Pending {
  kind: RequestKind;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** The webview's side of the protocol: requests become promises, `changed` becomes a callback. */
export class HostClient {
  private readonly api: VsCodeApi;
  private readonly pending = new Map<number, Pending>();
  private readonly changeListeners = new Set<() => void>();
  private nextId = 1;

  constructor(api: VsCodeApi = acquireVsCodeApi()) {
    this.api = api;
    window.addEventListener('message', (event: MessageEvent<unknown>) => this.receive(event.data));
  }

  request<K extends RequestKind>(kind: K, params: ParamsOf<K>): Promise<ResultOf<K>> {
    const id = this.nextId++;
    const message: RequestOf<K> = { type: 'request', id, kind, params };
    return new Promise<ResultOf<K>>((resolve, reject) => {
      // The response is checked to be for this id and kind before its result is handed over.
      this.pending.set(id, { kind, resolve: resolve as (result: unknown) => void, reject });
      this.api.postMessage(message);
    });
  }

  /** Asks the host to say whether anything changed; it answers with `changed`. */
  refresh(): void {
    this.api.postMessage({ type: 'refresh' });
  }

  onChanged(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  get state(): ViewState | undefined {
    return this.api.getState();
  }

  set state(state: ViewState) {
    this.api.setState(state);
  }

  private receive(raw: unknown): void {
    const msg = parseHostMessage(raw);
    if (!msg) return;
    if (msg.type === 'changed') {
      for (const listener of this.changeListeners) listener();
      return;
    }
    const waiting = this.pending.get(msg.id);
    if (!waiting || waiting.kind !== msg.kind) return;
    this.pending.delete(msg.id);
    if (msg.ok) waiting.resolve(msg.result);
    else waiting.reject(new Error(msg.error));
  }
}
