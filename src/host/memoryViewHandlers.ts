import type { BrowseItem } from '../core/memory/memoryBrowse';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { isRefusal } from '../core/refusal';
import {
  parseWebviewMessage,
  type HostMessage,
  type MemoryItem,
  type RequestHandlers,
  type SearchHit,
} from '../../webview/shared/protocol';
import { dispatchRequest } from '../../webview/shared/envelope';
import { memoryOverview } from './memoryOverview';
import { openFromView, restoreFromView, retireFromView, type MemoryViewPorts } from './memoryViewActions';

// No `vscode` here: the webview tests answer a real Chromium page with these same handlers.

/** More hits than a sidebar can show usefully; the rest are a refinement away. */
const SEARCH_TOP_K = 30;

/** A refusal from the engine is an answer the view shows, not a crash; it travels as an error. */
class RefusedError extends Error {}

export function memoryViewHandlers(services: RemoteServices, ports: MemoryViewPorts): RequestHandlers {
  const browse = services.browse;
  return {
    overview: () => memoryOverview(services),
    retire: ({ id }) => retireFromView(services, ports, id),
    restore: ({ id }) => restoreFromView(services, ports, id),
    open: (target) => openFromView(services, ports, target),
    async status() {
      const s = await services.memory.status();
      return {
        facts: s.facts,
        current_facts: s.current_facts,
        entries: s.entries,
        note_files: s.notes,
        entities: s.entities,
        semantic: s.semantic,
        semantic_reason: s.semantic ? null : s.semantic_reason,
        warnings: s.warnings,
      };
    },
    async search({ query, scope }) {
      const found = await services.memory.searchText({ query, scope, top_k: SEARCH_TOP_K });
      if (isRefusal(found)) throw new RefusedError(found.reason);
      const facts = await browse.factsByRef(found.hits.map((h) => h.id));
      const hits: SearchHit[] = [];
      for (const h of found.hits) {
        const base = { id: h.id, text: h.text, scope: h.scope, created_at: h.created_at, snippet: h.snippet };
        if (h.kind === 'note') {
          hits.push({ ...base, kind: 'note' });
          continue;
        }
        // A fact retired between the two reads is left out, as it would be from a search made a moment later.
        const fact = facts[h.id];
        if (fact) hits.push({ ...base, kind: 'fact', fact: { subject: fact.subject, predicate: fact.predicate, object: fact.object } });
      }
      return { query, hits, total: found.total };
    },
    async recent({ limit }) {
      return { items: (await browse.recent(limit)).map(toWire) };
    },
    async retrieve({ subject }) {
      const found = await services.memory.retrieve({ subject, include_history: true });
      if (isRefusal(found)) throw new RefusedError(found.reason);
      return {
        subject: found.subject,
        values: found.values.map((v) => ({
          id: v.id,
          predicate: v.predicate,
          object: v.object,
          scope: v.scope,
          source: v.source,
          recorded_at: v.recorded_at,
          status: v.status,
          superseded_at: v.superseded_at,
        })),
      };
    },
  };
}

function toWire(item: BrowseItem): MemoryItem {
  const base = { id: item.id, text: item.text, scope: item.scope, created_at: item.created_at };
  return item.kind === 'fact' ? { ...base, kind: 'fact', fact: { subject: item.subject, predicate: item.predicate, object: item.object } } : { ...base, kind: 'note' };
}

/**
 * Turns whatever the webview posted into what to post back: a response for a request, `changed`
 * for a refresh, nothing for junk. The handlers may still be waiting on the store to open; if
 * it failed, every request is answered with the reason instead of hanging the view.
 */
export async function answerWebviewMessage(raw: unknown, handlers: RequestHandlers | Promise<RequestHandlers>): Promise<HostMessage | undefined> {
  const msg = parseWebviewMessage(raw);
  if (!msg) return undefined;
  if (msg.type === 'refresh') return { type: 'changed' };
  try {
    return await dispatchRequest(await handlers, msg);
  } catch (err) {
    const error = err instanceof RefusedError ? err.message : `Recollect could not answer: ${err instanceof Error ? err.message : String(err)}`;
    return { type: 'response', id: msg.id, kind: msg.kind, ok: false, error };
  }
}
