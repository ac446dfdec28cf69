import { useEffect, useRef } from 'preact/hooks';
import type { FactVersion, HistoryResult } from '../shared/protocol';
import { When } from './format';

interface HistoryView {
  subject: string;
  result?: HistoryResult;
  error?: string;
}

/** Every value a subject's facts have had, grouped by predicate and scope, newest first. */
export function History({ view, onClose }: { view: HistoryView; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [view.subject]);
  const groups = new Map<string, FactVersion[]>();
  for (const v of view.result?.values ?? []) {
    const key = `${v.predicate}\u0000${v.scope}`;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return (
    <section
      class="history"
      aria-labelledby="history-title"
      onKeyDown={(e) => e.key === 'Escape' && onClose()}
    >
      <div class="history-head">
        <button type="button" class="link-button" onClick={onClose}>
          ← Back
        </button>
        <h2 id="history-title" class="section-title" tabIndex={-1} ref={heading}>
          History of “{view.subject}”
        </h2>
      </div>
      {view.error ? (
        <p class="error" role="alert">{view.error}</p>
      ) : !view.result ? (
        <p class="quiet">Loading…</p>
      ) : !groups.size ? (
        <p class="empty">No facts about “{view.subject}” any more.</p>
      ) : (
        [...groups.values()].map((values) => (
          <div class="history-group" key={values[0]?.id}>
            <h3 class="predicate">
              {values[0]?.predicate} <span class="scope">{values[0]?.scope}</span>
            </h3>
            <ol class="versions">
              {values.map((v) => (
                <li class={`version version-${v.status}`} key={v.id} data-status={v.status}>
                  <span class={`badge badge-${v.status}`}>{v.status === 'current' ? 'current' : 'replaced'}</span>
                  <span class="object">{v.object}</span>
                  <span class="item-meta">
                    <When at={v.recorded_at} prefix="recorded " />
                    {v.superseded_at && (
                      <>
                        {' · '}
                        <When at={v.superseded_at} prefix="replaced " />
                      </>
                    )}
                    {' · '}by {v.source}
                  </span>
                </li>
              ))}
            </ol>
          </div>
        ))
      )}
    </section>
  );
}
