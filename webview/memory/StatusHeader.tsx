import type { MemoryStatus } from '../shared/protocol';

const COUNTS = [
  { key: 'facts', label: 'facts', title: 'Every fact value recorded, replaced ones included' },
  { key: 'current_facts', label: 'current', title: 'Fact values not replaced by a newer one' },
  { key: 'entries', label: 'notes', title: 'Note entries in the daily notes' },
  { key: 'entities', label: 'entities', title: 'Distinct subjects that facts are about' },
] as const;

export function StatusHeader({ status, onRefresh }: { status: MemoryStatus | { error: string } | undefined; onRefresh: () => void }) {
  return (
    <header class="status">
      <div class="status-row">
        <h1 class="title">Memory</h1>
        <button type="button" class="link-button" onClick={onRefresh}>
          Refresh
        </button>
      </div>
      {status === undefined ? (
        <p class="quiet">Opening the store…</p>
      ) : 'error' in status ? (
        <p class="error" role="alert">{status.error}</p>
      ) : (
        <>
          <dl class="counts" aria-label="Memory status">
            {COUNTS.map((c) => (
              <div class="count" key={c.key} title={c.key === 'entries' ? `${c.title} (${status.note_files} daily files)` : c.title}>
                <dd data-count={c.key}>{status[c.key]}</dd>
                <dt>{c.label}</dt>
              </div>
            ))}
          </dl>
          {!status.semantic && (
            <p class="semantic" data-semantic="off">
              Semantic search off: {status.semantic_reason ?? 'no reason given'}.
            </p>
          )}
          {status.warnings.length > 0 && (
            <ul class="warnings" aria-label="Store warnings">
              {status.warnings.map((w, i) => (
                <li key={i}>{w}</li>
              ))}
            </ul>
          )}
        </>
      )}
    </header>
  );
}
