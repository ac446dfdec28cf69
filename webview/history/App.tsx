import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { DoorIntent, RowText, SessionDetail, SessionFilters } from '../shared/historyProtocol';
import type { HistoryClient, HistoryState } from './client';
import { buildItems, indexOfSeq, offsetsOf } from './items';
import { SessionList, type Listing } from './SessionList';
import { SessionView, type Outcome } from './SessionView';

/** Long enough that typing a word sends one search, short enough to feel live. */
const DEBOUNCE_MS = 250;
/** Saving state on every scroll frame would post a message per frame; this is often enough. */
const SAVE_SCROLL_MS = 150;
/** A revealed row sits a little below the top edge, not flush against it. */
const REVEAL_MARGIN = 60;

type Detail = { mode: 'none' } | { mode: 'loading'; id: string } | { mode: 'error'; id: string; message: string } | { mode: 'ready'; detail: SessionDetail };

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function App({ client }: { client: HistoryClient }) {
  const saved = useRef(client.state).current;
  const [filters, setFilters] = useState<SessionFilters>(saved?.filters ?? {});
  const [listing, setListing] = useState<Listing>({ mode: 'loading' });
  const [sessionId, setSessionId] = useState<string | undefined>();
  const [detail, setDetail] = useState<Detail>({ mode: 'none' });
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set(saved?.collapsed ?? []));
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set(saved?.open ?? []));
  const [texts, setTexts] = useState<ReadonlyMap<number, RowText | { error: string }>>(new Map());
  const [target, setTarget] = useState<number | undefined>();
  const [scrollTo, setScrollTo] = useState({ top: saved?.scrollTop ?? 0, token: 0 });
  const [busySeq, setBusySeq] = useState<number | null>(null);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const [generation, setGeneration] = useState(0);
  // Nothing is saved until the opening is settled, or a reload in between would forget the session.
  const [settled, setSettled] = useState(false);
  const scrollTop = useRef(saved?.scrollTop ?? 0);
  const saveTimer = useRef<ReturnType<typeof setTimeout>>();
  const latestList = useRef(0);
  const asked = useRef(new Set<string>());
  // Set when a session is opened: scroll to the saved position, or to the row asked for. It names
  // its session because select() replaces it at once while effects run a render late: the effect of
  // the previous session's render must not spend a reveal meant for the next session on its own rows.
  const pendingScroll = useRef<(({ top: number } | { seq: number }) & { sessionId: string }) | undefined>(
    saved?.sessionId ? { sessionId: saved.sessionId, top: saved.scrollTop } : undefined,
  );

  const save = useCallback(
    (patch: Partial<HistoryState> = {}) => {
      const state: HistoryState = { filters, sessionId, scrollTop: scrollTop.current, collapsed: [...collapsed], open: [...open], ...patch };
      client.state = state;
    },
    [client, filters, sessionId, collapsed, open],
  );
  useEffect(() => {
    if (settled) save();
  }, [save, settled]);

  const select = useCallback((id: string, seq?: number) => {
    setSessionId(id);
    setCollapsed(new Set());
    setOpen(new Set());
    setTexts(new Map());
    asked.current.clear();
    setOutcome(undefined);
    setTarget(seq);
    scrollTop.current = 0;
    pendingScroll.current = seq === undefined ? { sessionId: id, top: 0 } : { sessionId: id, seq };
  }, []);

  // What the panel was opened for wins over what it showed before; otherwise it resumes.
  useEffect(() => {
    const resume = () => saved?.sessionId && setSessionId(saved.sessionId);
    client
      .request('opening', {})
      .then((o) => (o.sessionId ? select(o.sessionId, o.seq) : resume()), resume)
      .finally(() => setSettled(true));
    return client.onNotice((n) => select(n.sessionId, n.seq));
  }, [client, select, saved]);

  useEffect(() => {
    const ticket = ++latestList.current;
    const settle = (next: Listing) => ticket === latestList.current && setListing(next);
    const timer = setTimeout(
      () => void client.request('sessions', filters).then((list) => settle({ mode: 'ready', list }), (err: unknown) => settle({ mode: 'error', message: message(err) })),
      filters.query?.trim() ? DEBOUNCE_MS : 0,
    );
    return () => clearTimeout(timer);
  }, [client, filters, generation]);

  useEffect(() => {
    if (!sessionId) return;
    // A reload of the same session keeps the rows on screen (and the scroll) until the new ones arrive.
    setDetail((d) => (d.mode === 'ready' && d.detail.session.id === sessionId ? d : { mode: 'loading', id: sessionId }));
    let live = true;
    client.request('session', { sessionId }).then(
      (next) => live && setDetail({ mode: 'ready', detail: next }),
      (err: unknown) => live && setDetail({ mode: 'error', id: sessionId, message: message(err) }),
    );
    return () => {
      live = false;
    };
  }, [client, sessionId, generation]);

  // Once the rows are there, go where the opening asked: a saved position or a row.
  useEffect(() => {
    const want = pendingScroll.current;
    // The rows must be the ones the scroll was asked for: right after a switch the previous session's are still shown.
    if (detail.mode !== 'ready' || !want || detail.detail.session.id !== want.sessionId || want.sessionId !== sessionId) return;
    pendingScroll.current = undefined;
    let top = 'top' in want ? want.top : 0;
    if ('seq' in want) {
      const items = buildItems(detail.detail.rows, detail.detail.chapters, collapsed, open);
      const at = indexOfSeq(items, want.seq);
      if (at >= 0) top = Math.max(0, (offsetsOf(items)[at] as number) - REVEAL_MARGIN);
    }
    scrollTop.current = top;
    setScrollTo((s) => ({ top, token: s.token + 1 }));
  }, [detail, sessionId, collapsed, open]);

  const onScroll = useCallback(
    (top: number) => {
      scrollTop.current = top;
      clearTimeout(saveTimer.current);
      saveTimer.current = setTimeout(() => save(), SAVE_SCROLL_MS);
    },
    [save],
  );

  const toggleRow = useCallback((seq: number) => {
    setOpen((o) => {
      const next = new Set(o);
      if (!next.delete(seq)) next.add(seq);
      return next;
    });
  }, []);

  // An opened row's whole text is fetched once, also for rows that were open before a reload.
  useEffect(() => {
    if (detail.mode !== 'ready' || detail.detail.session.id !== sessionId) return;
    for (const seq of open) {
      const key = `${sessionId}:${seq}`;
      if (asked.current.has(key)) continue;
      asked.current.add(key);
      client.request('rowText', { sessionId, seq }).then(
        (t) => setTexts((m) => new Map(m).set(seq, t)),
        (err: unknown) => setTexts((m) => new Map(m).set(seq, { error: message(err) })),
      );
    }
  }, [client, detail, sessionId, open]);

  const toggleChapter = useCallback((id: string) => {
    setCollapsed((c) => {
      const next = new Set(c);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  }, []);

  const door = useCallback(
    (intent: DoorIntent, seq: number) => {
      if (!sessionId || busySeq !== null) return;
      setBusySeq(seq);
      setOutcome(undefined);
      client
        .request('door', { intent, sessionId, uptoSeq: seq })
        .then(
          (result) => setOutcome({ intent, seq, result }),
          (err: unknown) => setOutcome({ intent, seq, result: { ok: false, reason: message(err) } }),
        )
        .finally(() => {
          setBusySeq(null);
          // New chapters (and counts in the list) are in the store now: ask again.
          setGeneration((g) => g + 1);
        });
    },
    [client, sessionId, busySeq],
  );

  const link = useCallback((url: string) => void client.request('openLink', { url }).catch(() => undefined), [client]);

  return (
    <div class="history">
      <SessionList filters={filters} listing={listing} selected={sessionId} onFilters={setFilters} onSelect={(id) => id !== sessionId && select(id)} />
      <main class="pane">
        {detail.mode === 'none' && <p class="empty pad">Pick a session to see its rows. Every assistant reply can be continued or forked from, with what came before archived as chapters.</p>}
        {detail.mode === 'loading' && <p class="quiet pad">Loading the session…</p>}
        {detail.mode === 'error' && <p class="error pad" role="alert">{detail.message}</p>}
        {detail.mode === 'ready' && (
          <SessionView
            detail={detail.detail}
            collapsed={collapsed}
            open={open}
            texts={texts}
            target={target}
            scrollTo={scrollTo}
            busySeq={busySeq}
            outcome={outcome}
            onScroll={onScroll}
            onToggleChapter={toggleChapter}
            onToggleRow={toggleRow}
            onDoor={door}
            onLink={link}
            onDismiss={() => setOutcome(undefined)}
          />
        )}
      </main>
    </div>
  );
}
