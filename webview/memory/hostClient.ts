import { WebviewClient, type VsCodeApi } from '../shared/client';
import { PARAM_GUARDS, type RequestMap } from '../shared/protocol';

/** What the view keeps across being hidden and shown (VS Code discards the page meanwhile). */
export interface ViewState {
  query: string;
  /** Sections the person folded. */
  collapsed?: string[];
}

type Changed = { type: 'changed' };

const parseChanged = (raw: unknown): Changed | undefined =>
  typeof raw === 'object' && raw !== null && (raw as { type?: unknown }).type === 'changed' ? { type: 'changed' } : undefined;

/** The webview's side of the protocol: requests become promises, `changed` becomes a callback. */
export class HostClient extends WebviewClient<RequestMap, ViewState, Changed> {
  constructor(api?: VsCodeApi<ViewState>) {
    super(PARAM_GUARDS, parseChanged, api);
  }

  /** Asks the host to say whether anything changed; it answers with `changed`. */
  refresh(): void {
    this.post({ type: 'refresh' });
  }

  onChanged(listener: () => void): () => void {
    return this.onNotice(() => listener());
  }
}
