import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { DEFAULT_SCOPE } from '../memory/scope';
import { Redaction } from '../privacy/redaction';
import { refuse, type Refusal } from '../refusal';
import { searchFts } from '../search/ftsSearch';
import type { Store } from '../store/store';
import { queryRows, queryScalar, type SqlValue } from '../store/sqlite';
import { normalizeKey, textProblem } from '../text/textRules';
import { iso } from '../text/time';
import { countTokens } from '../text/tokens';
import { sharedScope } from '../pool/teamShare';
import type { MachineIdentity } from './machine';
import { RULES_FTS, type RuleCategory, type RuleDecided, type RuleDecision, type RuleProposed, type RuleScope } from './rulesSchema';

export const RULES_DEFAULT_BUDGET = 800;
export const RULE_TEXT_MAX = 2_000;

export interface ProposeInput {
  text: string;
  scope: RuleScope;
  category?: RuleCategory | undefined;
  rationale?: string | undefined;
  /** Scope project: the project folder. */
  project?: string | undefined;
  /** Scope session: the session id; also recorded as where a project rule was proposed. */
  sessionId?: string | undefined;
}

export type RuleStatus = 'pending' | 'approved' | 'rejected';

export interface RuleView {
  id: string;
  text: string;
  scope: RuleScope;
  target: string;
  category: string;
  rationale: string | null;
  proposedBy: string;
  proposedAt: string;
  sessionId: string | null;
  /** On this machine: the latest decision a person made here, or pending. */
  status: RuleStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  /** Other machines that approved it (they do not put it in force here). */
  approvedElsewhere: number;
  /** `team:<name>` when the proposal was shared with a team through the pool; null: made here only. */
  sharedScope: string | null;
}

export interface AssembleInput {
  task: string;
  project?: string | undefined;
  sessionId?: string | undefined;
  budget?: number | undefined;
}

/**
 * Rules: write-once candidates a model proposes, put in force only by a person's decision on
 * this machine. `approve` and `reject` are for a person's click in the rule-approval view; no
 * tool calls them, so no model, MCP call or command argument can approve a rule.
 */
export class RulesService {
  constructor(
    private readonly store: Store,
    readonly machine: MachineIdentity,
    private readonly redaction: Redaction = new Redaction(),
  ) {}

  async propose(given: ProposeInput, client: string): Promise<{ ok: true; text: string; id: string; status: RuleStatus; duplicate: boolean } | Refusal> {
    const problem = textProblem('text', given.text) ?? (given.rationale === undefined ? undefined : textProblem('rationale', given.rationale));
    if (problem) return refuse(`${problem}. Nothing was proposed.`);
    // A rule is not in a memory scope; its text is read as global memory, or as the team's when
    // proposals are shared with one (teamShare.ts). Its id is of the text as kept.
    const shared = sharedScope(this.store.home, 'rules');
    const input = { ...given, ...(await this.redaction.value({ text: given.text, rationale: given.rationale }, shared ?? DEFAULT_SCOPE)) };
    const text = input.text.trim();
    if (!text) return refuse('the rule text is blank. Nothing was proposed.');
    if (text.length > RULE_TEXT_MAX) return refuse(`the rule is ${text.length} characters, over the ${RULE_TEXT_MAX} limit; a rule is one convention in a few sentences. Nothing was proposed.`, { limit: RULE_TEXT_MAX, used: text.length, unit: 'characters' });
    const target = input.scope === 'project' ? (input.project ? path.resolve(input.project) : undefined) : input.sessionId;
    if (!target) return refuse(input.scope === 'project' ? 'scope project needs a project folder, and this caller has no workspace: pass project. Nothing was proposed.' : 'scope session needs a session: pass sessionId. Nothing was proposed.');
    const id = ruleId(input.scope, target, text);
    const category = input.category ?? 'convention';
    return this.store.commit((db) => {
      if (queryScalar(db, 'SELECT 1 FROM rules WHERE id = ?', [id])) {
        const view = this.view(id) as RuleView;
        // Write-once: the same rule again changes nothing and says where it stands.
        return { result: { ok: true as const, id, status: view.status, duplicate: true, text: `This rule was proposed before (${id}, ${view.proposedAt} by ${view.proposedBy}) and is ${statusWords(view)}. Nothing new was written.` } };
      }
      const op: RuleProposed = {
        op: 'rules.proposed', at: this.store.now, id, text, scope: input.scope, target, category,
        rationale: input.rationale?.trim() || null, proposedBy: client, sessionId: input.sessionId ?? null,
        ...(shared ? { sharedScope: shared } : {}),
      };
      const where = input.scope === 'project' ? `project ${target}` : `session ${target}`;
      return {
        op,
        result: {
          ok: true as const, id, status: 'pending' as const, duplicate: false,
          text: `Proposed rule ${id} (${category}, ${where}): "${text}". It is not in force: a person must approve it on this machine in Recollect's rule approval view. Do not follow it as a rule until chapters_rules returns it.${shared ? ` The proposal is shared with ${shared} through the team pool; each machine's approval stays its own.` : ''}`,
        },
      };
    });
  }

  approve(ruleId: string, machineId: string, approver: string): Promise<{ ok: true; rule: RuleView } | Refusal> {
    return this.decide(ruleId, machineId, approver, 'approved', null);
  }

  reject(ruleId: string, machineId: string, approver: string, reason?: string): Promise<{ ok: true; rule: RuleView } | Refusal> {
    return this.decide(ruleId, machineId, approver, 'rejected', reason?.trim() || null);
  }

  /** Every rule with its status on this machine, newest first: what the rule-approval view lists. */
  list(status?: RuleStatus): RuleView[] {
    const ids = queryRows(this.store.db, 'SELECT id FROM rules ORDER BY proposed_at DESC, id').map((r) => String(r.id));
    return ids.map((id) => this.view(id) as RuleView).filter((v) => !status || v.status === status);
  }

  view(ruleId: string): RuleView | undefined {
    const db = this.store.db;
    const r = queryRows(db, 'SELECT * FROM rules WHERE id = ?', [ruleId])[0];
    if (!r) return undefined;
    const mine = this.machine.ids();
    const decisions = queryRows(db, 'SELECT machine_id, decision, approver, decided_at FROM rule_decisions WHERE rule_id = ? ORDER BY decided_at DESC, id DESC', [ruleId]);
    const here = decisions.find((d) => mine.includes(String(d.machine_id)));
    const elsewhere = new Set<string>();
    const seen = new Set<string>();
    for (const d of decisions) {
      const m = String(d.machine_id);
      if (seen.has(m) || mine.includes(m)) continue;
      seen.add(m);
      if (d.decision === 'approved') elsewhere.add(m);
    }
    return {
      id: String(r.id), text: String(r.text), scope: String(r.scope) as RuleScope, target: String(r.target), category: String(r.category),
      rationale: nullable(r.rationale), proposedBy: String(r.proposed_by), proposedAt: iso(Number(r.proposed_at)), sessionId: nullable(r.session_id),
      status: here ? (String(here.decision) as RuleStatus) : 'pending',
      decidedBy: here ? String(here.approver) : null,
      decidedAt: here ? iso(Number(here.decided_at)) : null,
      approvedElsewhere: elsewhere.size,
      sharedScope: nullable(r.shared_scope),
    };
  }

  /**
   * chapters_rules: the rules in force here for a project and a session, best first by the same
   * scorer as chapters_search (BM25 against the task, any word), then the rest, packed into the
   * budget. What did not fit is counted with the reason, and so is "nothing".
   */
  assemble(input: AssembleInput) {
    const budget = input.budget ?? RULES_DEFAULT_BUDGET;
    const project = input.project ? path.resolve(input.project) : undefined;
    const tiers: [RuleScope, string | undefined][] = [['project', project], ['session', input.sessionId]];
    const candidates = tiers.flatMap(([scope, target]) =>
      target ? queryRows(this.store.db, 'SELECT id FROM rules WHERE scope = ? AND target = ? ORDER BY proposed_at, id', [scope, target]).map((r) => this.view(String(r.id)) as RuleView) : [],
    );
    const inForce = candidates.filter((v) => v.status === 'approved');
    const scores = this.scores(input.task);
    const ranked = inForce
      .map((v, i) => ({ v, score: scores.value.get(v.id) ?? 0, i }))
      .sort((a, b) => b.score - a.score || a.i - b.i);
    const rules: { id: string; scope: RuleScope; category: string; text: string }[] = [];
    let used = countTokens('[]');
    let firstLeftOut: number | undefined;
    for (const { v } of ranked) {
      const next = [...rules, { id: v.id, scope: v.scope, category: v.category, text: v.text }];
      const cost = countTokens(JSON.stringify(next));
      if (cost > budget) {
        firstLeftOut ??= cost;
        continue;
      }
      rules.splice(0, rules.length, ...next);
      used = cost;
    }
    const withheldIds = ranked.map((r) => r.v.id).filter((id) => !rules.some((r) => r.id === id));
    const pending = candidates.filter((v) => v.status === 'pending').length;
    const rejected = candidates.filter((v) => v.status === 'rejected').length;
    return {
      ok: true as const,
      rules,
      shown: rules.length,
      active: { project: inForce.filter((v) => v.scope === 'project').length, session: inForce.filter((v) => v.scope === 'session').length },
      withheld: {
        count: withheldIds.length,
        why: withheldIds.length
          ? `${withheldIds.length} rule${withheldIds.length > 1 ? 's' : ''} in force did not fit the ${budget}-token budget (with the first one left out the list would be ${firstLeftOut} tokens); ask again with a larger budget to see ${withheldIds.length > 1 ? 'them' : 'it'}`
          : `nothing was withheld: all ${inForce.length} rule${inForce.length === 1 ? '' : 's'} in force for this project and session ${inForce.length === 1 ? 'is' : 'are'} shown`,
        ids: withheldIds,
      },
      notInForce: {
        awaitingApproval: pending,
        rejected,
        note: 'proposed rules count only once a person approves them on this machine; do not follow the others',
      },
      tiers: { project: project ?? null, session: input.sessionId ?? null },
      scoring: scores.note,
      budget: { requested: budget, used, remaining: budget - used },
    };
  }

  private scores(task: string): { value: Map<string, number>; note: string } {
    const found = searchFts(this.store.db, RULES_FTS, { query: task, limit: 10_000, sort: 'relevance', now: this.store.now, anyPhrase: true });
    if (!found.ok) return { value: new Map(), note: `the task has no searchable words, so rules are in the order they were proposed (${found.reason})` };
    const refs = new Map<number, SqlValue>();
    const ids = found.hits.map((h) => h.docid);
    for (const r of queryRows(this.store.db, `SELECT docid, ref FROM ${RULES_FTS} WHERE docid IN (${ids.map(() => '?').join(',') || 'NULL'})`, ids)) refs.set(Number(r.docid), r.ref ?? null);
    return { value: new Map(found.hits.map((h) => [String(refs.get(h.docid)), h.score])), note: 'best first by BM25 against the task (any of its words), the same scorer as chapters_search; rules matching no word follow in the order they were proposed' };
  }

  private async decide(ruleId: string, machineId: string, approver: string, decision: RuleDecision, reason: string | null) {
    if (!machineId.trim()) return refuse('a decision needs the machine id it is made on. Nothing was recorded.');
    if (!approver.trim()) return refuse('a decision needs the person who made it. Nothing was recorded.');
    return this.store.commit((db) => {
      if (!queryScalar(db, 'SELECT 1 FROM rules WHERE id = ?', [ruleId])) return { result: refuse(`no rule ${ruleId}. Nothing was recorded.`) as Refusal };
      const op: RuleDecided = { op: 'rules.decided', at: this.store.now, ruleId, machineId: machineId.trim(), decision, approver: approver.trim(), reason };
      return { op, result: undefined };
    }).then((r) => (r === undefined ? { ok: true as const, rule: this.view(ruleId) as RuleView } : r));
  }
}

/** Same tier, same target, same words (any case or spacing) → the same rule. */
export function ruleId(scope: RuleScope, target: string, text: string): string {
  return 'rule_' + createHash('sha256').update([scope, target, normalizeKey(text)].join('\u0000')).digest('hex').slice(0, 12);
}

function statusWords(v: RuleView): string {
  if (v.status === 'approved') return `approved on this machine by ${v.decidedBy} (${v.decidedAt})`;
  if (v.status === 'rejected') return `rejected on this machine by ${v.decidedBy} (${v.decidedAt}); proposing it again does not reopen it`;
  return 'still waiting for a person to approve it on this machine';
}

function nullable(v: SqlValue | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}
