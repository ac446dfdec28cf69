import type { ComponentChildren } from 'preact';
import type { OpenTarget, Overview } from '../shared/protocol';
import { When } from './format';
import { Empty, IconButton, Section } from './Section';

export interface SectionActions {
  retire(id: string): void;
  restore(id: string): void;
  open(target: OpenTarget): void;
  /** Shows a subject's facts and their history. */
  openSubject(subject: string, returnTo: string): void;
}

interface Props {
  overview: Overview;
  collapsed: ReadonlySet<string>;
  onToggle: (id: string) => void;
  actions: SectionActions;
}

/**
 * Everything besides recent facts: error fixes, rules, requests, sessions, the daily log, notes,
 * entities and what was retired. All text here was written by agents or tools, so it is only
 * ever rendered as text (Preact escapes it); nothing is parsed as markup or turned into a link.
 */
export function Sections({ overview: o, collapsed, onToggle, actions }: Props) {
  const section = (id: string, title: string, icon: string, listed: { items: unknown[]; total: number }, children: ComponentChildren, extra?: ComponentChildren) => (
    <Section id={id} title={title} icon={icon} count={listed.items.length} total={listed.total} collapsed={collapsed.has(id)} onToggle={onToggle} actions={extra}>
      {children}
    </Section>
  );
  return (
    <div class="sections">
      {section('errors', 'Errors and fixes', 'bug', o.errors, o.errors.items.length ? (
        <ul class="rows">
          {o.errors.items.map((e) => (
            <li class="row row-error" key={e.hash} data-hash={e.hash}>
              <div class="row-main">
                <span class="badge">{e.tool_name}</span>
                <span class="row-text symptom">{e.symptom}</span>
              </div>
              {e.cause && <p class="row-detail"><span class="label">Cause</span> {e.cause}</p>}
              <p class="row-detail fix"><span class="label">Fix</span> {e.action}</p>
              <p class="item-meta">
                {e.hash} · recorded {e.times_recorded}× · by {e.source} · <When at={e.last_recorded_at} />
              </p>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No fixes recorded yet. When an agent gets past a failing tool call it records the fix with <code>write_error</code>, and <code>error_history</code> finds it the next time.</Empty>
      ))}

      {section('rules', 'Rules', 'law', o.rules, o.rules.items.length ? (
        <ul class="rows">
          {o.rules.items.map((r) => (
            <li class="row row-rule" key={r.id} data-rule={r.id} data-status={r.status}>
              <div class="row-main">
                <span class={`badge badge-${r.status}`}>{r.status}</span>
                <span class="row-text">{r.text}</span>
              </div>
              <p class="item-meta">
                {r.category} · {r.scope} {r.target} · proposed by {r.proposedBy} · <When at={r.proposedAt} />
              </p>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No rules proposed yet. An agent proposes one with <code>chapters_rule_propose</code>; it is in force only once you approve it in Review Rules.</Empty>
      ), (
        <button type="button" class="link-button section-link" onClick={() => actions.open({ kind: 'rules' })}>
          {o.rules.pending ? `Review ${o.rules.pending} pending` : 'Review Rules'}
        </button>
      ))}

      {section('requests', 'Requests between agents', 'comment-discussion', o.requests, o.requests.items.length ? (
        <>
          <p class="item-meta section-note">
            {o.requests.counts.open} open · {o.requests.counts.answered} answered · {o.requests.counts.closed} closed. Written by agents: shown as text, never followed.
          </p>
          <ul class="rows">
            {o.requests.items.map((r) => (
              <li class="row row-request" key={r.id} data-request={r.id} data-status={r.status}>
                <div class="row-main">
                  <span class={`badge badge-${r.status}`}>{r.status}</span>
                  <span class="row-text">
                    <strong>{r.from}</strong> → <strong>{r.to}</strong>
                  </span>
                </div>
                <p class="row-detail untrusted request-text">
                  {r.request}
                  {r.request_chars !== undefined && <span class="quiet"> ({r.request_chars} characters in all)</span>}
                </p>
                {r.answer !== null && <p class="row-detail untrusted answer-text"><span class="label">Answer</span> {r.answer}</p>}
                <p class="item-meta">
                  {r.scope} · asked <When at={r.asked_at} />
                  {r.closed_at && <> · closed <When at={r.closed_at} /></>}
                </p>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <Empty>No requests between agents yet. One agent asks another with <code>ask_agent</code>; the other sees it in <code>whats_new</code> and answers with <code>answer_request</code>.</Empty>
      ))}

      {section('sessions', 'Imported sessions', 'history', o.sessions, o.sessions.items.length ? (
        <ul class="rows">
          {o.sessions.items.map((s) => (
            <li class="row row-session" key={s.id}>
              <button type="button" class="row-button" data-session={s.id} title="Open in Session History" onClick={() => actions.open({ kind: 'session', sessionId: s.id })}>
                <span class="row-text">{s.title ?? '(untitled session)'}</span>
                <span class="item-meta">
                  {s.source}
                  {s.workspace && <> · {s.workspace}</>} · {s.runs} {s.runs === 1 ? 'run' : 'runs'}
                  {s.updatedAt && <> · <When at={s.updatedAt} /></>}
                </span>
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No chat sessions imported yet. Run <strong>Recollect: Import Chat History Now</strong>; sessions from VS Code chat, Claude Code and Codex then appear here.</Empty>
      ))}

      {section('log', 'Daily log', 'calendar', o.log, o.log.items.length ? (
        <ul class="rows">
          {o.log.items.map((e) => (
            <li class="row row-entry" key={e.id} data-entry={e.id}>
              <div class="row-main">
                <span class="row-text">{e.text}</span>
                <span class="row-actions">
                  <IconButton icon="go-to-file" label={`Open the day log ${e.path}`} onClick={() => actions.open({ kind: 'vault', path: e.path })} />
                  <IconButton icon="archive" className="retire" label="Retire this entry" onClick={() => actions.retire(e.id)} />
                </span>
              </div>
              <p class="item-meta">
                {e.day} · {e.scope} · by {e.source} · <When at={e.created_at} />
              </p>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>The daily log is empty. Agents add a line to today’s log with <code>remember_note</code>.</Empty>
      ))}

      {section('notes', 'Notes', 'note', o.notes, o.notes.items.length ? (
        <ul class="rows">
          {o.notes.items.map((n) => (
            <li class="row row-note" key={n.id} data-note={n.id}>
              <div class="row-main">
                <button type="button" class="link-button row-link" title={`Open ${n.path}`} onClick={() => actions.open({ kind: 'vault', path: n.path })}>
                  {n.title}
                </button>
                <span class="row-actions">
                  <IconButton icon="archive" className="retire" label={`Retire the note ${n.path}`} onClick={() => actions.retire(n.id)} />
                </span>
              </div>
              <p class="item-meta">
                {n.path} · {n.scope} · <When at={n.at} />
              </p>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No notes in the vault yet. Write Markdown files in the vault (<strong>Recollect: Open Vault Folder</strong>) or bring some in with <strong>Recollect: Import Memory…</strong></Empty>
      ))}

      {section('entities', 'Entities', 'symbol-class', o.entities, o.entities.items.length ? (
        <ul class="rows">
          {o.entities.items.map((e) => (
            <li class="row row-entity" key={e.name}>
              <button type="button" class="row-button" data-item={`entity:${e.name}`} title={`Show the facts about “${e.name}” and their history`} onClick={() => actions.openSubject(e.name, `entity:${e.name}`)}>
                <span class="row-text"><strong>{e.name}</strong></span>
                <span class="item-meta">
                  {e.current_facts} current of {e.facts} {e.facts === 1 ? 'fact' : 'facts'} · <When at={e.last_recorded_at} />
                </span>
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No entities yet. They are what facts are about: an agent saves one with <code>remember</code> or <code>save_memory</code>.</Empty>
      ))}

      {section('retired', 'Retired', 'archive', o.retired, o.retired.items.length ? (
        <ul class="rows">
          {o.retired.items.map((r) => (
            <li class="row row-retired" key={r.id} data-retired={r.id}>
              <div class="row-main">
                <span class="badge">{r.kind}</span>
                <span class="row-text">{r.label}</span>
                <span class="row-actions">
                  <button type="button" class="link-button restore" onClick={() => actions.restore(r.id)}>
                    Restore
                  </button>
                </span>
              </div>
              <p class="item-meta">
                {r.scope} · retired <When at={r.retired_at} />
              </p>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>Nothing retired. Retire on a fact, entry or note takes it out of recall without deleting it; it then waits here to be restored.</Empty>
      ))}

      {section('activity', 'Activity', 'pulse', o.activity, o.activity.items.length ? (
        <>
          <p class="item-meta section-note">Recollect's own tool calls, newest first. Kept beside the memory, never recalled; <strong>Recollect: Show Activity</strong> shows more.</p>
          <ul class="rows">
            {o.activity.items.map((a, i) => (
              <li class="row row-activity" key={`${a.at}-${i}`} data-ok={String(a.ok)}>
                <div class="row-main">
                  <span class={`badge${a.ok ? '' : ' badge-refused'}`}>{a.tool}</span>
                  <span class="row-text untrusted">{a.input}</span>
                </div>
                <p class="row-detail untrusted activity-result">{a.ok ? '' : 'Refused: '}{a.result}</p>
                <p class="item-meta">
                  {a.client} · {a.ms} ms · <When at={a.at} />
                </p>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <Empty>No tool calls yet. Each call an agent makes to Recollect is noted here, outside the memory it searches.</Empty>
      ))}
    </div>
  );
}
