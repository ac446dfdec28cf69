import { contentWords } from '../../core/memory/recall/queryWords';
import { invokeTool } from '../../core/tools/invoke';
import type { Bm25Baseline } from './bm25Baseline';
import { EVAL_CLIENT, registryTool, type LoadedConversation } from './conversationStore';
import type { EvalQuestion } from './dataset';
import { RECALL_KS } from './recall';

export const SYSTEMS = ['get_context', 'search_text', 'search_text_keywords', 'chat_history', 'chat_history_semantic', 'search_memory', 'bm25'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** How each system is asked, written into the report so a figure can be reproduced. */
export interface AskSettings {
  maxTokens: number;
}

export function describeSystems(settings: AskSettings): Record<SystemName, string> {
  const top = Math.max(...RECALL_KS);
  return {
    get_context: `get_context {query: <question>, max_tokens: ${settings.maxTokens}}; items in reply order`,
    search_text: `search_text {query: <question, verbatim>, top_k: ${top}}; every word must match, as the tool documents`,
    search_text_keywords: `search_text {query: <the question's content words, as get_context picks them>, top_k: ${top}}: what an agent typing keywords would send`,
    chat_history: `chat_history {mode: search, query: <question>, limit: ${top}} over the turns imported as Claude Code transcripts; a hit is its turn by time`,
    chat_history_semantic: `chat_history {mode: search, match: semantic, query: <question>, limit: ${top}} over the same imported turns`,
    search_memory: `search_memory {query: <question>, top_k: ${top}} over the memory entries`,
    bm25: `in-memory Okapi BM25 (k1 1.2, b 0.75) over the same stored turn texts, any query word, top ${top}`,
  };
}

export interface Answer {
  /** Turn keys in rank order; undefined for an item that is no turn of this conversation. */
  ranked: (string | undefined)[];
  refused?: string;
  ms: number;
}

export async function ask(system: SystemName, q: EvalQuestion, loaded: LoadedConversation, baseline: Bm25Baseline, settings: AskSettings): Promise<Answer> {
  const top = Math.max(...RECALL_KS);
  const started = performance.now();
  if (system === 'bm25') return { ranked: baseline.rank(q.question, top), ms: performance.now() - started };
  loaded.clock.now = q.askedAt;
  const [name, input] = request(system, q.question, top, settings);
  const reply = (await invokeTool(registryTool(name), input, loaded.services, { client: EVAL_CLIENT })) as Reply;
  const ms = performance.now() - started;
  if (reply.ok !== true) return { ranked: [], refused: String(reply.reason ?? 'refused'), ms };
  if (name === 'chat_history') return { ranked: (reply.hits ?? []).map((h) => loaded.historyTurnAt.get(Date.parse(String(h.at)))), ms };
  const items = name === 'get_context' ? [...(reply.facts ?? []), ...(reply.notes ?? [])] : (reply.hits ?? []);
  return { ranked: items.map((item) => loaded.entryTurn.get(String(item.id))), ms };
}

function request(system: Exclude<SystemName, 'bm25'>, question: string, top: number, settings: AskSettings): [string, object] {
  switch (system) {
    case 'get_context':
      return ['get_context', { query: question, max_tokens: settings.maxTokens }];
    case 'search_text':
      return ['search_text', { query: question, top_k: top }];
    case 'search_text_keywords':
      return ['search_text', { query: contentWords(question).join(' '), top_k: top }];
    case 'chat_history':
      return ['chat_history', { mode: 'search', query: question, limit: top }];
    case 'chat_history_semantic':
      return ['chat_history', { mode: 'search', match: 'semantic', query: question, limit: top }];
    case 'search_memory':
      return ['search_memory', { query: question, top_k: top }];
  }
}

interface Reply {
  ok?: boolean;
  reason?: unknown;
  facts?: { id?: unknown }[];
  notes?: { id?: unknown }[];
  hits?: { id?: unknown; at?: unknown }[];
}
