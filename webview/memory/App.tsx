import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ChangeOutcome, HistoryResult, MemoryItem, MemoryStatus, OpenTarget, Overview, SearchResult } from '../shared/protocol';
import type { HostClient } from './hostClient';
import { History } from './History';
import { ItemList } from './ItemList';
import { Section } from './Section';
import { Sections, type SectionActions } from './Sections';
import { StatusHeader } from './StatusHeader';

/** Long enough that typing a word sends one search, short enough to feel live. */
const DEBOUNCE_MS = 200;
const RECENT_LIMIT = 40;

type Listing =
  | { mode: 'loading' }
  | { mode: 'recent'; items: MemoryItem[] }
  | { mode: 'search'; query: string; result: SearchResult }
  | { mode: 'error'; message: string };

type HistoryView = { subject: string; returnTo: string; result?: HistoryResult; error?: string };

/**
 * Searching as one types: a word still being typed is searched as a prefix, since the
 * engine matches whole words and "stag" would otherwise find nothing on the way to "staging".
 */
function asYouType(query: string): string {
  return /[\p{L}\p{N}_]$/u.test(query) ? `${query}*` : query;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function App({ client }: { client: HostClient }) {
  const [query, setQuery] = useState(client.state?.query ?? '');
  const [status, setStatus] = useState<MemoryStatus | { error: string } | undefined>();
  const [listing, setListing] = useState<Listing>({ mode: 'loading' });
  const [history, setHistory] = useState<HistoryView | undefined>();
  // Bumped by the host's `changed`: every effect that reads the store runs again.
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const [overview, setOverview] = useState<Overview | { error: string } | undefined>();
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set(client.state?.collapsed ?? []));
  const [notice, setNotice] = useState<ChangeOutcome | undefined>();

  useEffect(() => client.onChanged(() => setGeneration((g) => g + 1)), [client]);

  useEffect(() => {
    client.request('status', {}).then(setStatus, (err: unknown) => setStatus({ error: message(err) }));
  }, [client, generation]);

  useEffect(() => {
    client.request('overview', {}).then(setOverview, (err: unknown) => setOverview({ error: message(err) }));
  }, [client, generation]);

  // Saved in the same commit as the render (not in a deferred effect), so a reload or a hidden
  // view right after a fold or a keystroke never restores the state from before it.
  useLayoutEffect(() => {
    client.state = { query, collapsed: [...collapsed] };
  }, [client, query, collapsed]);

  useEffect(() => {
    const ticket = ++latest.current;
    const settle = (next: Listing) => ticket === latest.current && setListing(next);
    const trimmed = query.trim();
    if (!trimmed) {
      client.request('recent', { limit: RECENT_LIMIT }).then((r) => settle({ mode: 'recent', items: r.items }), (err: unknown) => settle({ mode: 'error', message: message(err) }));
      return;
    }
    const timer = setTimeout(() => {
      client.request('search', { query: asYouType(trimmed) }).then(
        (result) => settle({ mode: 'search', query: trimmed, result }),
        (err: unknown) => settle({ mode: 'error', message: message(err) }),
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [client, query, generation]);

  const subject = history?.subject;
  useEffect(() => {
    if (subject === undefined) return;
    client.request('retrieve', { subject }).then(
      (result) => setHistory((h) => (h?.subject === subject ? { ...h, result, error: undefined } : h)),
      (err: unknown) => setHistory((h) => (h?.subject === subject ? { ...h, error: message(err) } : h)),
    );
  }, [client, subject, generation]);

  const openHistory = useCallback((item: MemoryItem) => {
    if (item.kind === 'fact') setHistory({ subject: item.fact.subject, returnTo: item.id });
  }, []);
  const toggle = useCallback((id: string) => {
    setCollapsed((c) => {
      const next = new Set(c);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  }, []);
  // Retire and restore: the host asks the person first; whatever came of it is said at the top.
  const change = useCallback(
    (kind: 'retire' | 'restore', id: string) => {
      client.request(kind, { id }).then(
        (outcome) => {
          setNotice(outcome);
          if (outcome.outcome === 'done') setGeneration((g) => g + 1);
        },
        (err: unknown) => setNotice({ outcome: 'refused', message: message(err) }),
      );
    },
    [client],
  );
  const actions: SectionActions = {
    retire: (id) => change('retire', id),
    restore: (id) => change('restore', id),
    open: (target: OpenTarget) => {
      client.request('open', target).then(
        (r) => setNotice(r.opened ? undefined : { outcome: 'refused', message: `Could not open it: ${r.reason ?? 'no reason given'}.` }),
        (err: unknown) => setNotice({ outcome: 'refused', message: message(err) }),
      );
    },
    openSubject: (subject, returnTo) => setHistory({ subject, returnTo }),
  };
  const closeHistory = useCallback(() => {
    const returnTo = history?.returnTo;
    setHistory(undefined);
    // Focus goes back to the row that opened the history, so keyboard users keep their place.
    if (returnTo) requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-item="${CSS.escape(returnTo)}"]`)?.focus());
  }, [history]);

  return (
    <div class="memory">
      <StatusHeader status={status} onRefresh={() => client.refresh()} />
      <div class="search">
        <label for="memory-search">Search memory</label>
        <input
          id="memory-search"
          type="search"
          value={query}
          placeholder="words, names, ids…"
          autocomplete="off"
          spellcheck={false}
          aria-describedby="listing-summary"
          onInput={(e) => {
            setHistory(undefined);
            setQuery(e.currentTarget.value);
          }}
        />
      </div>
      {notice && (
        <div class={`notice notice-${notice.outcome}`} role={notice.outcome === 'refused' ? 'alert' : 'status'} data-outcome={notice.outcome}>
          <span class="notice-text">{notice.message}</span>
          <button type="button" class="icon-button" aria-label="Dismiss" title="Dismiss" onClick={() => setNotice(undefined)}>
            <span class="codicon codicon-close" aria-hidden="true" />
          </button>
        </div>
      )}
      {history ? (
        <History view={history} onClose={closeHistory} />
      ) : (
        <>
          <Listing listing={listing} onOpenFact={openHistory} onRetire={actions.retire} folded={{ collapsed, onToggle: toggle }} />
          {listing.mode !== 'search' &&
            (overview === undefined ? null : 'error' in overview ? (
              <p class="error" role="alert">{overview.error}</p>
            ) : (
              <Sections overview={overview} collapsed={collapsed} onToggle={toggle} actions={actions} />
            ))}
        </>
      )}
    </div>
  );
}

interface Folded {
  collapsed: ReadonlySet<string>;
  onToggle: (id: string) => void;
}

function Listing({ listing, onOpenFact, onRetire, folded }: { listing: Listing; onOpenFact: (item: MemoryItem) => void; onRetire: (id: string) => void; folded: Folded }) {
  switch (listing.mode) {
    case 'loading':
      return <p class="quiet" id="listing-summary">Loading…</p>;
    case 'error':
      return <p class="error" role="alert" id="listing-summary">{listing.message}</p>;
    case 'recent':
      if (!listing.items.length) {
        return (
          <p class="empty" id="listing-summary">
            Nothing remembered yet — ask an agent to <code>remember</code> something, or run <code>recollect tool remember</code>.
          </p>
        );
      }
      return (
        <Section id="recent" title="Recent facts and notes" icon="clock" count={listing.items.length} collapsed={folded.collapsed.has('recent')} onToggle={folded.onToggle}>
          <p class="sr-only" id="listing-summary" aria-live="polite">{listing.items.length} newest facts and notes</p>
          <ItemList items={listing.items} onOpenFact={onOpenFact} onRetire={onRetire} />
        </Section>
      );
    case 'search': {
      const { hits, total } = listing.result;
      if (!hits.length) {
        return (
          <p class="empty" id="listing-summary" aria-live="polite">
            Nothing in memory matches “{listing.query}”. Try fewer or other words; clear the box to see what was remembered recently.
          </p>
        );
      }
      return (
        <section aria-labelledby="results-title">
          <h2 id="results-title" class="section-title">
            Matches <span class="quiet" id="listing-summary" aria-live="polite">{total > hits.length ? `${hits.length} of ${total}` : `${total}`}</span>
          </h2>
          <ItemList items={hits} onOpenFact={onOpenFact} onRetire={onRetire} />
        </section>
      );
    }
  }
}
