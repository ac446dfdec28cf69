import { isRefusal } from '../core/refusal';
import type { RuleView } from '../core/rules/rulesService';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { parseRulesRequest, type DecideResult, type RuleItem, type RulesHandlers, type RulesResponse } from '../../webview/shared/rulesProtocol';
import { RefusedError, answerRequest } from './webviewRpc';

// No `vscode` here: the webview tests answer a real Chromium page with these same handlers.

/** What the rule-approval panel needs from VS Code. */
export interface RulesPorts {
  /** This machine as VS Code knows it (vscode.env.machineId): decisions are recorded per machine. */
  machineId: string;
  /** Who decides: the person at this machine. */
  approver: string;
  /**
   * Shows the rule as the store holds it and asks the person to confirm (in VS Code a modal
   * dialog). Only a yes here puts a rule in force.
   */
  confirmApproval(rule: RuleView): Promise<boolean>;
  /** Told after a decision is recorded (the status bar's pending count). */
  decided?(): void;
}

export function rulesViewHandlers(services: RemoteServices, ports: RulesPorts): RulesHandlers {
  return {
    async rules() {
      const all = (await services.rules.list()).map(toItem);
      return {
        pending: all.filter((r) => r.status === 'pending'),
        approved: all.filter((r) => r.status === 'approved'),
        rejected: all.filter((r) => r.status === 'rejected'),
        machine: ports.machineId.slice(0, 8),
      };
    },
    async decide({ ruleId, decision, reason }): Promise<DecideResult> {
      // The message names the rule only; what the person is asked about is what the store holds.
      const rule = await services.rules.view(ruleId);
      if (!rule) throw new RefusedError(`no rule ${ruleId}: it may have been removed. Nothing was recorded.`);
      if (decision === 'approve') {
        if (!(await ports.confirmApproval(rule))) return { decided: false, status: rule.status, note: 'Not approved: the confirmation was dismissed. Nothing was recorded.' };
        const done = await services.rules.approve(ruleId, ports.machineId, ports.approver);
        if (isRefusal(done)) throw new RefusedError(done.reason);
        ports.decided?.();
        return { decided: true, status: done.rule.status, note: `Approved on this machine by ${ports.approver}: agents get it from chapters_rules from now on.` };
      }
      const done = await services.rules.reject(ruleId, ports.machineId, ports.approver, reason);
      if (isRefusal(done)) throw new RefusedError(done.reason);
      ports.decided?.();
      return { decided: true, status: done.rule.status, note: `Rejected on this machine by ${ports.approver}${reason?.trim() ? ` (${reason.trim()})` : ''}.` };
    },
  };
}

export function answerRulesMessage(raw: unknown, handlers: RulesHandlers | Promise<RulesHandlers>): Promise<RulesResponse | undefined> {
  return answerRequest(parseRulesRequest, raw, handlers);
}

function toItem(v: RuleView): RuleItem {
  return {
    id: v.id,
    text: v.text,
    scope: v.scope,
    target: v.target,
    category: v.category,
    rationale: v.rationale,
    proposedBy: v.proposedBy,
    proposedAt: v.proposedAt,
    status: v.status,
    decidedBy: v.decidedBy,
    decidedAt: v.decidedAt,
    approvedElsewhere: v.approvedElsewhere,
  };
}
