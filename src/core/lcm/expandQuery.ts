import { HISTORY_FTS } from '../history/historySchema';
import { isRefusal, refuse, type Refusal } from '../refusal';
import { searchFts } from '../search/ftsSearch';
import { queryRows } from '../store/sqlite';
import type { Store } from '../store/store';
import { conversationIds, describeScope, type ConversationScope } from './conversations';
import { runExpandAgent, type AgentOutcome, type ExpandCallResult } from './expandAgent';
import { excerptAnswer, type Bucket, type ExcerptAnswer } from './excerpts';
import type { ExpandGrants } from './grants';
import type { LanguageModelPort, ModelToolSpec } from './languageModel';
import type { LcmConfig } from './lcmConfig';
import type { LcmReads } from './lcmReads';
import { LCM_SUMMARY_FTS } from './lcmSchema';
import { fitTokens } from './summariser';

export interface ExpandQueryInput {
  prompt: string;
  query?: string | undefined;
  summaryIds?: string[] | undefined;
  maxTokens: number;
}

/** Runs the registered lcm_expand tool for the sub-agent, under the given grant. */
export type CallExpand = (input: unknown, grantToken: string) => Promise<object>;

interface BucketResult {
  bucket: Bucket;
  status: 'ok' | 'timeout' | 'failed';
  answer: string;
  citedIds: string[];
  citedMessageIds: number[];
  expandedSummaryCount: number;
  sourceTokens: number;
  synthesizedBy: string | null;
  error?: string;
  stoppedBy?: string;
}

const SEEDS_PER_CONVERSATION = 8;

export class ExpandQuery {
  constructor(
    private readonly store: Store,
    private readonly reads: LcmReads,
    private readonly grants: ExpandGrants,
    private readonly config: () => LcmConfig,
    private readonly model: () => LanguageModelPort | undefined,
  ) {}

  async run(input: ExpandQueryInput, scope: ConversationScope, callExpand: CallExpand, expandTool: ModelToolSpec): Promise<object | Refusal> {
    if (!input.query && !input.summaryIds?.length) return refuse('lcm_expand_query needs a query (text to find summaries) or summaryIds (summaries to expand)');
    const found = input.summaryIds?.length ? this.bucketsFromIds(input.summaryIds, scope) : this.bucketsFromQuery(input.query as string, scope);
    if (isRefusal(found)) return found;
    const config = this.config();
    const chosen = scope.all ? found.slice(0, config.maxConversations) : found;
    const skipped = found.slice(chosen.length);
    if (!chosen.length) {
      return { ok: true, answer: `Nothing in ${scope.how} matches "${input.query ?? ''}".`, citedIds: [], sourceConversationIds: [], expandedSummaryCount: 0, totalSourceTokens: 0, truncated: false, synthesizedBy: null, scope: describeScope(scope) };
    }

    const model = this.model();
    const useModel = model?.available() === true;
    const deadline = Date.now() + config.expandTimeoutMs;
    const results: BucketResult[] = [];
    for (const [i, bucket] of chosen.entries()) {
      const share = Math.floor((deadline - Date.now()) / (chosen.length - i));
      const answerTokens = Math.max(64, Math.floor(input.maxTokens / chosen.length));
      results.push(useModel && share > 0 ? await this.withAgent(model as LanguageModelPort, bucket, input, share, answerTokens, callExpand, expandTool) : this.withoutModel(bucket, input, answerTokens, useModel ? 'no time was left for this conversation' : undefined));
    }

    const ok = results.filter((r) => r.status === 'ok');
    const sections = results.length === 1 ? (results[0] as BucketResult).answer : results.map((r) => `## Conversation ${r.bucket.conversationId}${r.bucket.title ? ` — ${r.bucket.title}` : ''}\n${r.answer}`).join('\n\n');
    // A conversation the model did not answer carries the no-model note inside its own part.
    const synthesizedBy = ok.find((r) => r.synthesizedBy)?.synthesizedBy ?? null;
    const merged = synthesizedBy && results.length > 1 ? await this.merge(model as LanguageModelPort, input, sections, deadline) : undefined;
    const fitted = fitTokens(merged ?? sections, input.maxTokens);
    const failed = results.filter((r) => r.status !== 'ok');
    const truncatedBecause = [
      ...(fitted.cut ? [`the answer was cut to maxTokens=${input.maxTokens}`] : []),
      ...(skipped.length ? [`${skipped.length} lower-ranked conversation(s) were not expanded`] : []),
      ...failed.map((r) => `conversation ${r.bucket.conversationId}: ${r.error ?? r.status}`),
    ];
    const validIds = new Set(results.flatMap((r) => r.citedIds));
    return {
      ok: true,
      answer: fitted.text,
      citedIds: [...validIds],
      citedMessageIds: [...new Set(results.flatMap((r) => r.citedMessageIds))],
      sourceConversationIds: ok.map((r) => r.bucket.conversationId),
      expandedSummaryCount: results.reduce((n, r) => n + r.expandedSummaryCount, 0),
      totalSourceTokens: results.reduce((n, r) => n + r.sourceTokens, 0),
      truncated: truncatedBecause.length > 0,
      ...(truncatedBecause.length ? { truncatedBecause } : {}),
      synthesizedBy,
      ...(scope.all
        ? {
            conversationBreakdown: [
              ...results.map((r) => ({ conversationId: r.bucket.conversationId, title: r.bucket.title, status: r.status, ...(r.stoppedBy ? { stoppedBy: r.stoppedBy } : {}), ...(r.error ? { error: r.error } : {}), expandedSummaryCount: r.expandedSummaryCount, sourceTokens: r.sourceTokens })),
              ...skipped.map((b) => ({ conversationId: b.conversationId, title: b.title, status: 'skipped' as const, expandedSummaryCount: 0, sourceTokens: 0 })),
            ],
          }
        : {}),
      scope: describeScope(scope),
    };
  }

  private async withAgent(model: LanguageModelPort, bucket: Bucket, input: ExpandQueryInput, timeMs: number, answerTokens: number, callExpand: CallExpand, tool: ModelToolSpec): Promise<BucketResult> {
    const config = this.config();
    const grant = this.grants.issue([bucket.sessionId], timeMs, config.maxExpandTokens);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeMs);
    let outcome: AgentOutcome;
    try {
      outcome = await runExpandAgent(
        model,
        { prompt: input.prompt, query: input.query, conversationLabel: `conversation ${bucket.conversationId}${bucket.title ? `, "${bucket.title}"` : ''}`, seeds: this.seeds(bucket), maxAnswerTokens: answerTokens, maxTurns: config.maxAgentTurns, tool },
        async (args) => expandResult(await callExpand(args, grant.token), grant.budget - grant.used),
        controller.signal,
      );
    } finally {
      // Clean-up whatever happened: the grant dies with the run and any pending model request is cancelled.
      clearTimeout(timer);
      controller.abort();
      this.grants.revoke(grant.token);
    }
    const seedTokens = this.seeds(bucket).reduce((n, s) => n + (this.reads.summary(s.id)?.tokens ?? 0), 0);
    if (outcome.answer && outcome.stoppedBy !== 'timeout' && outcome.stoppedBy !== 'error') {
      const mentioned = [...outcome.answer.matchAll(/sum_[0-9a-f]{16}/g)].map((m) => m[0]).filter((id) => this.reads.summary(id)?.sessionId === bucket.sessionId);
      return {
        bucket, status: 'ok', answer: outcome.answer, citedIds: [...new Set([...outcome.expandedIds, ...mentioned])], citedMessageIds: [],
        expandedSummaryCount: outcome.expandedIds.length, sourceTokens: outcome.sourceTokens + seedTokens, synthesizedBy: `model:${model.describe()}`, stoppedBy: outcome.stoppedBy,
      };
    }
    const why = outcome.stoppedBy === 'timeout' ? `the sub-agent stopped at the ${(timeMs / 1000).toFixed(1)} s time limit` : `the sub-agent failed: ${outcome.error ?? 'it gave no answer'}`;
    const fallback = this.withoutModel(bucket, input, answerTokens, why);
    return { ...fallback, status: outcome.stoppedBy === 'timeout' ? 'timeout' : 'failed', stoppedBy: outcome.stoppedBy, sourceTokens: fallback.sourceTokens + outcome.sourceTokens, error: why };
  }

  /** One answer from the per-conversation ones, within what is left of the time limit; the sections stand if it fails. */
  private async merge(model: LanguageModelPort, input: ExpandQueryInput, sections: string, deadline: number): Promise<string | undefined> {
    const timeMs = deadline - Date.now();
    if (timeMs <= 0) return undefined;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeMs);
    try {
      const reply = await model.complete(
        [
          { role: 'system', content: `Combine answers found in separate conversations into one answer to the question, in at most ${input.maxTokens} tokens. Keep every [id] citation you rely on; say where the conversations disagree. Use only what the answers say.` },
          { role: 'user', content: `Question: ${input.prompt}\n\n${sections}` },
        ],
        { tools: [], maxOutputTokens: input.maxTokens * 2 },
        controller.signal,
      );
      return reply.text.trim() || undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }

  private withoutModel(bucket: Bucket, input: ExpandQueryInput, answerTokens: number, why?: string): BucketResult {
    const a: ExcerptAnswer = excerptAnswer(this.store, this.reads, { prompt: input.prompt, query: input.query, bucket, maxTokens: answerTokens, withNote: true });
    const answer = why ? `(${why}.)\n${a.text}` : a.text;
    return { bucket, status: 'ok', answer, citedIds: a.citedIds, citedMessageIds: a.citedMessageIds, expandedSummaryCount: a.expandedSummaryCount, sourceTokens: a.sourceTokens, synthesizedBy: null };
  }

  private seeds(bucket: Bucket) {
    return bucket.summaryIds.slice(0, SEEDS_PER_CONVERSATION).flatMap((id) => {
      const s = this.reads.summary(id);
      return s ? [{ id: s.id, heading: `${s.kind}, depth ${s.depth}, ${s.earliestAt ? new Date(s.earliestAt).toISOString() : 'time unknown'}`, content: s.content }] : [];
    });
  }

  private bucketsFromIds(ids: string[], scope: ConversationScope): Bucket[] | Refusal {
    const rows = [...new Set(ids)].map((id) => ({ id, row: this.reads.summary(id) }));
    const unknown = rows.filter((r) => !r.row).map((r) => r.id);
    if (unknown.length) return refuse(`unknown summary ids: ${unknown.join(', ')}; lcm_grep with scope "summaries" finds them`);
    const db = this.store.db;
    const convs = conversationIds(db, rows.map((r) => r.row?.sessionId ?? ''));
    const outside = scope.all ? [] : rows.filter((r) => r.row?.sessionId !== scope.sessionId);
    if (outside.length) {
      return refuse(`${outside.map((r) => `${r.id} (conversation ${convs.get(r.row?.sessionId ?? '')})`).join(', ')} lie outside ${scope.how}; pass conversationId or allConversations: true`);
    }
    const buckets = new Map<string, Bucket>();
    rows.forEach((r, i) => {
      const sessionId = r.row?.sessionId ?? '';
      const b = buckets.get(sessionId) ?? { sessionId, conversationId: convs.get(sessionId) ?? 0, title: this.title(sessionId), score: 0, summaryIds: [], messageIds: [] };
      b.summaryIds.push(r.id);
      b.score += rows.length - i;
      buckets.set(sessionId, b);
    });
    return [...buckets.values()].sort((a, b) => b.score - a.score);
  }

  /** Conversations ranked by the summed relevance of their best summary and message hits. */
  private bucketsFromQuery(query: string, scope: ConversationScope): Bucket[] | Refusal {
    const db = this.store.db;
    const now = this.store.now;
    const sums = searchFts(db, LCM_SUMMARY_FTS, { query, limit: 200, sort: 'relevance', now, ...(scope.all ? {} : { scope: scope.sessionId }) });
    if (!sums.ok) return refuse(sums.reason);
    const msgs = searchFts(db, HISTORY_FTS, { query, limit: 200, sort: 'relevance', now, ...(scope.all ? {} : { filters: { session_id: scope.sessionId } }) });
    if (!msgs.ok) return refuse(msgs.reason);
    const sessionOfSummary = new Map(this.rowsIn('SELECT n AS k, id, session_id FROM lcm_summaries WHERE n IN', sums.hits.map((h) => h.docid)).map((r) => [Number(r.k), { id: String(r.id), sessionId: String(r.session_id) }]));
    const sessionOfMessage = new Map(this.rowsIn('SELECT id AS k, session_id FROM events WHERE id IN', msgs.hits.map((h) => h.docid)).map((r) => [Number(r.k), String(r.session_id)]));
    const buckets = new Map<string, Bucket & { scores: number[] }>();
    const bucket = (sessionId: string) => {
      let b = buckets.get(sessionId);
      if (!b) buckets.set(sessionId, (b = { sessionId, conversationId: 0, title: this.title(sessionId), score: 0, summaryIds: [], messageIds: [], scores: [] }));
      return b;
    };
    for (const h of sums.hits) {
      const s = sessionOfSummary.get(h.docid);
      if (!s) continue;
      const b = bucket(s.sessionId);
      b.summaryIds.push(s.id);
      b.scores.push(h.bm25);
    }
    for (const h of msgs.hits) {
      const sessionId = sessionOfMessage.get(h.docid);
      if (!sessionId) continue;
      const b = bucket(sessionId);
      b.messageIds.push(h.docid);
      b.scores.push(h.bm25);
    }
    const convs = conversationIds(db, buckets.keys());
    return [...buckets.values()]
      .map(({ scores, ...b }) => ({ ...b, conversationId: convs.get(b.sessionId) ?? 0, score: scores.sort((x, y) => y - x).slice(0, 5).reduce((n, s) => n + s, 0), messageIds: b.messageIds.slice(0, 50) }))
      .sort((a, b) => b.score - a.score || b.conversationId - a.conversationId);
  }

  private rowsIn(sql: string, ids: number[]) {
    if (!ids.length) return [];
    return queryIn(this.store, sql, ids);
  }

  private title(sessionId: string): string | null {
    const r = queryIn(this.store, 'SELECT id AS k, title FROM sessions WHERE id IN', [sessionId])[0];
    return r && r.title !== null ? String(r.title) : null;
  }
}

function queryIn(store: Store, sql: string, ids: (number | string)[]) {
  return queryRows(store.db, `${sql} (${ids.map(() => '?').join(',')})`, ids);
}

/** Reads what the lcm_expand tool returned into what the loop tracks: ids read, tokens spent, and whether the budget is gone. */
function expandResult(result: object, remainingBefore: number): ExpandCallResult {
  const r = result as { ok?: boolean; citedIds?: string[]; totalTokens?: number; remainingTokens?: number; budget?: { unit?: string }; withheld?: { tokens: number }[] };
  if (r.ok === false) return { result, citedIds: [], tokens: 0, budgetSpent: r.budget?.unit === 'tokens' || remainingBefore <= 0 };
  const remaining = r.remainingTokens ?? 1;
  // Spent: nothing left, or what was withheld cannot fit what is left.
  const spent = remaining <= 0 || (r.withheld?.length ? Math.min(...r.withheld.map((w) => w.tokens)) > remaining : false);
  return { result, citedIds: r.citedIds ?? [], tokens: r.totalTokens ?? 0, budgetSpent: spent };
}
