/**
 * The rule-approval panel's protocol. A decision names a rule by id and nothing else a model
 * could have written: the host re-reads the rule from the store, shows its text in a modal
 * dialog and records the decision only when the person confirms there.
 */

import { isRecord, onlyKeys, parseRequest, type HandlersFor, type ParamGuards, type ParamsIn, type RequestIn, type ResponseIn } from './envelope';

export const RULE_ID = /^rule_[0-9a-f]{12}$/;
export const REASON_MAX = 2_000;

export type RuleStatus = 'pending' | 'approved' | 'rejected';

export interface RuleItem {
  id: string;
  text: string;
  scope: 'project' | 'session';
  /** The project folder or the session id the rule is for. */
  target: string;
  category: string;
  rationale: string | null;
  proposedBy: string;
  proposedAt: string;
  status: RuleStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  /** Other machines that approved it; that does not put it in force here. */
  approvedElsewhere: number;
}

export interface RuleLists {
  pending: RuleItem[];
  approved: RuleItem[];
  rejected: RuleItem[];
  /** The start of this machine's id, so a person sees decisions are per machine. */
  machine: string;
}

export type Decision = 'approve' | 'reject';

export interface DecideResult {
  /** False when the person dismissed the confirmation: nothing was recorded. */
  decided: boolean;
  status: RuleStatus;
  note: string;
}

export interface RequestMap {
  rules: { params: Record<string, never>; result: RuleLists };
  decide: { params: { ruleId: string; decision: Decision; reason?: string }; result: DecideResult };
}

export type RulesKind = keyof RequestMap & string;
export type RulesParams<K extends RulesKind> = ParamsIn<RequestMap, K>;
export type RulesRequest = RequestIn<RequestMap>;
export type RulesResponse = ResponseIn<RequestMap>;
export type RulesHandlers = HandlersFor<RequestMap>;

/** Host → panel besides responses: rules changed (proposed or decided elsewhere); ask again. */
export type RulesNotice = { type: 'changed' };
export type RulesHostMessage = RulesResponse | RulesNotice;

export const RULES_GUARDS: ParamGuards<RequestMap> = {
  rules: (p): p is RulesParams<'rules'> => onlyKeys(p, []),
  decide: (p): p is RulesParams<'decide'> =>
    onlyKeys(p, ['ruleId', 'decision', 'reason']) &&
    typeof p.ruleId === 'string' &&
    RULE_ID.test(p.ruleId) &&
    (p.decision === 'approve' || p.decision === 'reject') &&
    (p.reason === undefined || (p.decision === 'reject' && typeof p.reason === 'string' && p.reason.length <= REASON_MAX)),
};

export function parseRulesRequest(raw: unknown): RulesRequest | undefined {
  return parseRequest(RULES_GUARDS, raw);
}

export function parseRulesNotice(raw: unknown): RulesNotice | undefined {
  return isRecord(raw) && raw.type === 'changed' ? { type: 'changed' } : undefined;
}
