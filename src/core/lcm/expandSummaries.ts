import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { conversationIdOf } from './conversations';
import type { ExpandGrant } from './grants';
import { tokensOf, type LcmReads, type SourceMessage, type SummaryRow } from './lcmReads';

export interface ExpandRequest {
  summaryIds: string[];
  includeMessages: boolean;
  tokenCap?: number | undefined;
}

interface Piece {
  owner: string;
  tokens: number;
  child?: SummaryRow;
  message?: SourceMessage;
}

/**
 * lcm_expand under a grant: each summary one level down (a condensed summary's children, a
 * leaf's source messages verbatim). Pieces are whole or withheld, never cut; what did not fit
 * the grant's remaining budget is listed with its measured size.
 */
export function expandSummaries(store: Store, reads: LcmReads, grant: ExpandGrant, req: ExpandRequest): object | Refusal {
  const unknown = req.summaryIds.filter((id) => !reads.summary(id));
  if (unknown.length) return refuse(`unknown summary ids: ${unknown.join(', ')}`);
  const expanded = req.summaryIds.map((id) => reads.expandOne(id)).filter((e): e is NonNullable<typeof e> => !!e);
  const outside = expanded.filter((e) => !grant.sessionIds.has(e.summary.sessionId)).map((e) => e.summary.id);
  if (outside.length) return refuse(`${outside.join(', ')} lie outside the conversations this expansion may read`);
  const remaining = grant.budget - grant.used;
  if (remaining <= 0) return refuse(`the expansion budget of ${grant.budget} tokens is spent; answer from what was read`, { limit: grant.budget, used: grant.used, unit: 'tokens' });
  const budget = Math.min(remaining, req.tokenCap ?? Infinity);

  const pieces: Piece[] = [];
  for (const e of expanded) {
    for (const child of e.children) pieces.push({ owner: e.summary.id, tokens: tokensOf(child.content), child });
    if (req.includeMessages) for (const m of e.messages) pieces.push({ owner: e.summary.id, tokens: tokensOf(m.text), message: m });
  }
  let used = 0;
  const kept = new Set<Piece>();
  const withheld: { id: string | number; type: 'summary' | 'message'; tokens: number; fileId?: string | null }[] = [];
  for (const p of pieces) {
    if (used + p.tokens <= budget) {
      kept.add(p);
      used += p.tokens;
    } else if (p.child) withheld.push({ id: p.child.id, type: 'summary', tokens: p.tokens });
    else if (p.message) withheld.push({ id: p.message.id, type: 'message', tokens: p.tokens, fileId: p.message.fileId });
  }
  grant.used += used;

  const db = store.db;
  const expansions = expanded.map((e) => ({
    summaryId: e.summary.id,
    depth: e.summary.depth,
    kind: e.summary.kind,
    conversationId: conversationIdOf(db, e.summary.sessionId),
    children: pieces.filter((p) => p.owner === e.summary.id && p.child && kept.has(p)).map((p) => {
      const c = p.child as SummaryRow;
      return { summaryId: c.id, depth: c.depth, kind: c.kind, earliestAt: c.earliestAt, latestAt: c.latestAt, tokens: p.tokens, content: c.content };
    }),
    messages: pieces.filter((p) => p.owner === e.summary.id && p.message && kept.has(p)).map((p) => ({ ...(p.message as SourceMessage), tokens: p.tokens })),
    ...(e.summary.kind === 'leaf' && !req.includeMessages ? { note: 'includeMessages is false: the source messages were not read' } : {}),
  }));
  const citedIds = [...new Set([...expanded.map((e) => e.summary.id), ...[...kept].flatMap((p) => (p.child ? [p.child.id] : []))])];
  return {
    ok: true,
    expansions,
    citedIds,
    totalTokens: used,
    remainingTokens: grant.budget - grant.used,
    truncated: withheld.length > 0,
    ...(withheld.length ? { withheld, withheldReason: `these did not fit the ${budget} tokens left; expand fewer ids per call or answer from what was read` } : {}),
  };
}
