import { WebviewClient } from '../shared/client';
import { HISTORY_GUARDS, parseHistoryNotice, type HistoryNotice, type RequestMap, type SessionFilters } from '../shared/historyProtocol';

/** What the panel keeps across reloads (it is not kept alive while hidden). */
export interface HistoryState {
  filters: SessionFilters;
  sessionId?: string | undefined;
  scrollTop: number;
  collapsed: string[];
  open: number[];
}

export type HistoryClient = WebviewClient<RequestMap, HistoryState, HistoryNotice>;

export function historyClient(): HistoryClient {
  return new WebviewClient<RequestMap, HistoryState, HistoryNotice>(HISTORY_GUARDS, parseHistoryNotice);
}
