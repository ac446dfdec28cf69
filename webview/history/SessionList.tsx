import type { SessionFilters, SessionList as List, SessionSummary } from '../shared/historyProtocol';
import { Snippet, When } from './Text';

export type Listing = { mode: 'loading' } | { mode: 'error'; message: string } | { mode: 'ready'; list: List };

const SOURCE_NAMES: Record<string, string> = {
  'vscode-chat': 'VS Code chat',
  'copilot-transcript': 'Copilot transcript',
  'copilot-cli': 'Copilot CLI',
  'claude-code': 'Claude Code',
  codex: 'Codex',
};

export const sourceName = (s: string) => SOURCE_NAMES[s] ?? s;

/** The left pane: search and filters over every imported session, and the sessions they find. */
export function SessionList({ filters, listing, selected, onFilters, onSelect }: {
  filters: SessionFilters;
  listing: Listing;
  selected: string | undefined;
  onFilters: (next: SessionFilters) => void;
  onSelect: (id: string) => void;
}) {
  const list = listing.mode === 'ready' ? listing.list : undefined;
  const set = (key: keyof SessionFilters, value: string) => onFilters({ ...filters, [key]: value || undefined });
  return (
    <nav class="sessions" aria-label="Sessions">
      <div class="filters">
        <label class="sr-only" for="history-search">Search sessions</label>
        <input id="history-search" type="search" placeholder="Search every session…" value={filters.query ?? ''} autocomplete="off" spellcheck={false} onInput={(e) => set('query', e.currentTarget.value)} />
        <div class="filter-row">
          <label>
            Source
            <select value={filters.source ?? ''} onChange={(e) => set('source', e.currentTarget.value)} aria-label="Source">
              <option value="">All sources</option>
              {withCurrent(list?.sources, filters.source).map((f) => (
                <option key={f.name} value={f.name}>
                  {sourceName(f.name)} ({f.sessions})
                </option>
              ))}
            </select>
          </label>
          <label>
            Workspace
            <select value={filters.workspace ?? ''} onChange={(e) => set('workspace', e.currentTarget.value)} aria-label="Workspace">
              <option value="">All workspaces</option>
              {withCurrent(list?.workspaces, filters.workspace).map((f) => (
                <option key={f.name} value={f.name} title={f.name}>
                  {baseName(f.name)} ({f.sessions})
                </option>
              ))}
            </select>
          </label>
        </div>
        <div class="filter-row">
          <label>
            From
            <input type="date" value={filters.since ?? ''} max={filters.until} onChange={(e) => set('since', e.currentTarget.value)} aria-label="From day" />
          </label>
          <label>
            To
            <input type="date" value={filters.until ?? ''} min={filters.since} onChange={(e) => set('until', e.currentTarget.value)} aria-label="To day" />
          </label>
        </div>
      </div>
      {listing.mode === 'loading' && <p class="quiet pad">Loading sessions…</p>}
      {listing.mode === 'error' && <p class="error pad" role="alert">{listing.message}</p>}
      {list && (
        <>
          <p class="quiet pad note" aria-live="polite">{list.note}</p>
          {!list.sessions.length ? (
            <p class="empty pad">No session matches. Clear a filter, or import transcripts with “Recollect: Import Chat History Now”.</p>
          ) : (
            <ul class="session-list">
              {list.sessions.map((s) => (
                <SessionItem key={s.id} s={s} selected={s.id === selected} onSelect={onSelect} />
              ))}
            </ul>
          )}
        </>
      )}
    </nav>
  );
}

function SessionItem({ s, selected, onSelect }: { s: SessionSummary; selected: boolean; onSelect: (id: string) => void }) {
  return (
    <li>
      <button type="button" class={`session${selected ? ' selected' : ''}`} aria-current={selected ? 'true' : undefined} data-session={s.id} onClick={() => onSelect(s.id)}>
        <span class="session-title">{s.title?.trim() || '(untitled)'}</span>
        {s.snippet && (
          <span class="session-snippet">
            <Snippet text={s.snippet} />
          </span>
        )}
        <span class="session-meta">
          {sourceName(s.source)} · <When at={s.updatedAt ?? s.startedAt} /> · {s.events} {s.events === 1 ? 'event' : 'events'}
          {s.chapters > 0 && ` · ${s.chapters} ${s.chapters === 1 ? 'chapter' : 'chapters'}`}
          {s.matches !== undefined && ` · ${s.matches} ${s.matches === 1 ? 'match' : 'matches'}`}
          {s.workspace && <span class="workspace" title={s.workspace}> · {baseName(s.workspace)}</span>}
        </span>
      </button>
    </li>
  );
}

/** A filter chosen earlier stays selectable even when the facets no longer list it. */
function withCurrent(facets: { name: string; sessions: number }[] | undefined, current: string | undefined) {
  const all = facets ?? [];
  return current && !all.some((f) => f.name === current) ? [...all, { name: current, sessions: 0 }] : all;
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? p;
}
