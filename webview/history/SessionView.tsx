import { useMemo } from 'preact/hooks';
import type { DoorIntent, DoorOutcome, RowText, SessionDetail } from '../shared/historyProtocol';
import { buildItems, offsetsOf, type Item } from './items';
import { ChapterHeader, RowView, type RowActions } from './RowView';
import { sourceName } from './SessionList';
import { When } from './Text';
import { VirtualList } from './VirtualList';

export interface Outcome {
  intent: DoorIntent;
  seq: number;
  result: DoorOutcome;
}

export interface SessionViewProps {
  detail: SessionDetail;
  collapsed: ReadonlySet<string>;
  open: ReadonlySet<number>;
  texts: ReadonlyMap<number, RowText | { error: string }>;
  target: number | undefined;
  scrollTo: { top: number; token: number };
  busySeq: number | null;
  outcome: Outcome | undefined;
  onScroll: (top: number) => void;
  onToggleChapter: (id: string) => void;
  onToggleRow: (seq: number) => void;
  onDoor: (intent: DoorIntent, seq: number) => void;
  onLink: (url: string) => void;
  onDismiss: () => void;
}

const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;

/** One session: what it is, what is archived of it, and its rows (virtualised). */
export function SessionView(p: SessionViewProps) {
  const { detail } = p;
  const items = useMemo(() => buildItems(detail.rows, detail.chapters, p.collapsed, p.open), [detail, p.collapsed, p.open]);
  const offsets = useMemo(() => offsetsOf(items), [items]);
  const actions: RowActions = {
    ceiling: detail.ceiling.archiveCeiling,
    openTurnReason: detail.ceiling.openTurn?.reason ?? null,
    busySeq: p.busySeq,
    door: p.onDoor,
    toggle: p.onToggleRow,
    link: p.onLink,
  };
  const render = (i: number) => {
    const it = items[i] as Item;
    if (it.type === 'chapter') return <ChapterHeader chapter={it.chapter} collapsed={it.collapsed} rows={it.rows} onToggle={() => p.onToggleChapter(it.chapter.id)} />;
    return <RowView row={it.row} open={it.open} inChapter={it.inChapter} target={it.row.seq === p.target} text={p.texts.get(it.row.seq)} actions={actions} />;
  };
  const s = detail.session;
  return (
    <section class="detail" aria-labelledby="session-title">
      <header class="detail-head">
        <h1 id="session-title">{s.title?.trim() || '(untitled)'}</h1>
        <p class="quiet">
          {sourceName(s.source)}
          {s.workspace && <> · <span title={s.workspace}>{s.workspace}</span></>} · <When at={s.startedAt} /> · {plural(s.events, 'event')} · {plural(detail.rows.length, 'row')}
        </p>
        <p class="quiet archive-line" data-ceiling={detail.ceiling.archiveCeiling}>
          {detail.chapters.length ? `${plural(detail.chapters.length, 'chapter')} archived` : 'Nothing archived yet'} · archivable up to seq {detail.ceiling.archiveCeiling}
          {detail.ceiling.openTurn && ` — from seq ${detail.ceiling.openTurn.fromSeq} the turn is unfinished (${detail.ceiling.openTurn.reason})`}
          {detail.children.length > 0 && ` · ${plural(detail.children.length, 'session')} opened from it (${detail.children.map((c) => `${c.intent} up to #${c.uptoSeq ?? '?'}`).join(', ')})`}
        </p>
      </header>
      {p.outcome && <OutcomeBanner outcome={p.outcome} onDismiss={p.onDismiss} />}
      <VirtualList
        count={items.length}
        offsets={offsets}
        keyOf={(i) => (items[i] as Item).key}
        renderItem={render}
        scrollTo={p.scrollTo}
        onScroll={p.onScroll}
        label={`Rows of ${s.title ?? s.id}`}
      />
    </section>
  );
}

function OutcomeBanner({ outcome, onDismiss }: { outcome: Outcome; onDismiss: () => void }) {
  const r = outcome.result;
  const verb = outcome.intent === 'continue' ? 'Continue' : 'Fork';
  return (
    <div class={`outcome ${r.ok ? 'outcome-ok' : 'outcome-refused'}`} role="status" data-outcome={r.ok ? 'ok' : 'refused'}>
      {r.ok ? (
        <p>
          {verb} up to #{outcome.seq}: {plural(r.chapters, 'chapter')} in the table of contents ({r.newChapters} newly archived), next session {r.childSessionId}. {r.opened ? 'A new chat opened' : 'Not opened here'}: {r.how}.
          {r.warnings.map((w, i) => (
            <span class="warning" key={i}>
              {' '}
              {w}
            </span>
          ))}
        </p>
      ) : (
        <p>
          {verb} up to #{outcome.seq}: nothing was archived. {r.reason}
        </p>
      )}
      <button type="button" class="link-button" onClick={onDismiss} aria-label="Dismiss">
        <span class="codicon codicon-close" aria-hidden="true" />
      </button>
    </div>
  );
}
