import { useCallback, useEffect, useState } from 'preact/hooks';
import { REASON_MAX, type Decision, type RuleItem, type RuleLists } from '../shared/rulesProtocol';
import type { RulesClient } from './client';

type Lists = { mode: 'loading' } | { mode: 'error'; message: string } | { mode: 'ready'; lists: RuleLists };

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const when = (at: string | null) => (at && !Number.isNaN(Date.parse(at)) ? dateFormat.format(Date.parse(at)) : (at ?? ''));

/**
 * Rules agents proposed, waiting for a person, and the ones decided on this machine. Buttons
 * send only the rule's id: VS Code shows the rule as stored and asks before approving.
 */
export function App({ client }: { client: RulesClient }) {
  const [lists, setLists] = useState<Lists>({ mode: 'loading' });
  const [generation, setGeneration] = useState(0);
  const [notice, setNotice] = useState<{ ruleId: string; text: string; ok: boolean } | undefined>();
  const [busy, setBusy] = useState<string | undefined>();

  useEffect(() => client.onNotice(() => setGeneration((g) => g + 1)), [client]);
  useEffect(() => {
    client.request('rules', {}).then((l) => setLists({ mode: 'ready', lists: l }), (err: unknown) => setLists({ mode: 'error', message: message(err) }));
  }, [client, generation]);

  const decide = useCallback(
    (ruleId: string, decision: Decision, reason?: string) => {
      setBusy(ruleId);
      client
        .request('decide', { ruleId, decision, ...(reason?.trim() ? { reason: reason.trim() } : {}) })
        .then(
          (r) => setNotice({ ruleId, text: r.note, ok: r.decided }),
          (err: unknown) => setNotice({ ruleId, text: message(err), ok: false }),
        )
        .finally(() => {
          setBusy(undefined);
          setGeneration((g) => g + 1);
        });
    },
    [client],
  );

  if (lists.mode === 'loading') return <p class="quiet pad">Loading rules…</p>;
  if (lists.mode === 'error') return <p class="error pad" role="alert">{lists.message}</p>;
  const { pending, approved, rejected, machine } = lists.lists;
  return (
    <div class="rules">
      <header class="head">
        <h1>Rule approval</h1>
        <p class="quiet">
          Agents propose rules with chapters_rule_propose; a rule is in force only once a person approves it here. Decisions count for this machine only ({machine}…).
        </p>
        {notice && (
          <p class={`notice ${notice.ok ? 'notice-ok' : 'notice-not'}`} role="status" data-notice={notice.ruleId}>
            {notice.text}
          </p>
        )}
      </header>
      <Section id="pending" title="Waiting for approval" rules={pending} empty="No rule is waiting. When an agent proposes one, it appears here." busy={busy} decide={decide} />
      <Section id="approved" title="Approved on this machine" rules={approved} empty="No rule approved here yet." busy={busy} decide={decide} />
      <Section id="rejected" title="Rejected on this machine" rules={rejected} empty="No rule rejected here." busy={busy} decide={decide} />
    </div>
  );
}

type Decide = (ruleId: string, decision: Decision, reason?: string) => void;

function Section({ id, title, rules, empty, busy, decide }: { id: string; title: string; rules: RuleItem[]; empty: string; busy: string | undefined; decide: Decide }) {
  return (
    <section class="section" aria-labelledby={`${id}-title`} data-list={id}>
      <h2 id={`${id}-title`}>
        {title} <span class="count">{rules.length}</span>
      </h2>
      {rules.length ? (
        <ul class="cards">
          {rules.map((r) => (
            <RuleCard key={r.id} rule={r} busy={busy === r.id} decide={decide} />
          ))}
        </ul>
      ) : (
        <p class="empty">{empty}</p>
      )}
    </section>
  );
}

function RuleCard({ rule, busy, decide }: { rule: RuleItem; busy: boolean; decide: Decide }) {
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  return (
    <li class={`card card-${rule.status}`} data-rule={rule.id}>
      <p class="rule-text">{rule.text}</p>
      {rule.rationale && <p class="rationale">Why: {rule.rationale}</p>}
      <p class="meta quiet">
        {rule.category} · for {rule.scope} <span title={rule.target}>{rule.target}</span> · proposed by <strong>{rule.proposedBy}</strong> on {when(rule.proposedAt)}
        {rule.decidedAt && ` · ${rule.status} by ${rule.decidedBy ?? '?'} on ${when(rule.decidedAt)}`}
        {rule.approvedElsewhere > 0 && ` · approved on ${rule.approvedElsewhere} other machine${rule.approvedElsewhere > 1 ? 's' : ''}`}
      </p>
      {rejecting ? (
        <form
          class="reject-form"
          onSubmit={(e) => {
            e.preventDefault();
            decide(rule.id, 'reject', reason);
            setRejecting(false);
          }}
        >
          <label>
            Why not (optional)
            <input type="text" value={reason} maxLength={REASON_MAX} onInput={(e) => setReason(e.currentTarget.value)} aria-label="Reason for rejecting" />
          </label>
          <button type="submit" class="secondary" data-action="confirm-reject" disabled={busy}>
            Reject
          </button>
          <button type="button" class="link-button" onClick={() => setRejecting(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <div class="actions">
          {rule.status !== 'approved' && (
            <button type="button" class="primary" data-action="approve" disabled={busy} onClick={() => decide(rule.id, 'approve')} title="VS Code shows the rule and asks you to confirm">
              Approve…
            </button>
          )}
          {rule.status !== 'rejected' && (
            <button type="button" class="secondary" data-action="reject" disabled={busy} onClick={() => setRejecting(true)}>
              {rule.status === 'approved' ? 'Withdraw approval' : 'Reject'}
            </button>
          )}
        </div>
      )}
    </li>
  );
}
