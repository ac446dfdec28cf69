import type { ChapterSpan, DoorIntent, Row, RowText } from '../shared/historyProtocol';
import { TranscriptText, When, formatBytes } from './Text';

const LABEL: Record<Row['kind'], string> = {
  user: 'You',
  assistant: 'Assistant',
  reasoning: 'Reasoning',
  tool: 'Tool',
  tool_result: 'Tool result',
  other: 'Note',
};

export interface RowActions {
  /** Rows above this seq cannot be archived yet (an unfinished turn). */
  ceiling: number;
  openTurnReason: string | null;
  /** The seq whose Continue/Fork is running, if any: every door waits for it. */
  busySeq: number | null;
  door(intent: DoorIntent, seq: number): void;
  toggle(seq: number): void;
  link(url: string): void;
}

export interface RowProps {
  row: Row;
  open: boolean;
  inChapter: boolean;
  target: boolean;
  text: RowText | { error: string } | undefined;
  actions: RowActions;
}

export function RowView({ row, open, inChapter, target, text, actions }: RowProps) {
  const compact = row.kind !== 'user' && row.kind !== 'assistant';
  const cls = `row row-${row.kind}${compact ? ' compact' : ''}${open ? ' open' : ''}${inChapter ? ' in-chapter' : ''}${target ? ' target' : ''}`;
  return (
    <article class={cls} data-seq={row.seq} data-kind={row.kind} aria-label={`${LABEL[row.kind]}, seq ${row.seq}`}>
      <div class="row-head">
        <button type="button" class="toggle" aria-expanded={open} onClick={() => actions.toggle(row.seq)} title={open ? 'Close' : 'Show all of it'}>
          <span class={`chevron codicon codicon-chevron-${open ? 'down' : 'right'}`} aria-hidden="true" />
          <span class="who">{row.kind === 'tool' || (row.kind === 'tool_result' && row.toolName) ? (row.toolName ?? 'Tool') : row.kind === 'other' ? (row.rawKind ?? 'note') : LABEL[row.kind]}</span>
          {compact && !open && <span class="inline-preview">{row.preview.replace(/\s+/g, ' ')}</span>}
        </button>
        <span class="row-meta">
          {sizeNote(row)} · <When at={row.at} timeOnly /> · #{row.seq}
        </span>
        {row.kind === 'assistant' && <DoorButtons seq={row.seq} actions={actions} />}
      </div>
      {open ? (
        <div class="full" tabIndex={0}>
          <FullText row={row} text={text} onLink={actions.link} />
        </div>
      ) : (
        !compact && (
          <p class="preview">
            <TranscriptText text={row.preview} onLink={actions.link} />
          </p>
        )
      )}
    </article>
  );
}

function sizeNote(row: Row): string {
  if (row.kind === 'tool') return row.result ? `${row.result.isError ? 'failed, ' : ''}result ${formatBytes(row.result.bytes)}` : 'no result';
  return formatBytes(row.bytes);
}

function DoorButtons({ seq, actions }: { seq: number; actions: RowActions }) {
  const above = seq > actions.ceiling;
  const busy = actions.busySeq !== null;
  const why = above
    ? `Not archivable yet: this reply is in an unfinished turn${actions.openTurnReason ? ` (${actions.openTurnReason})` : ''}. Only rows up to seq ${actions.ceiling} can be archived.`
    : undefined;
  const button = (intent: DoorIntent, label: string, title: string) => (
    <button
      type="button"
      class={`door door-${intent}`}
      data-action={intent}
      data-seq={seq}
      aria-disabled={above || busy}
      title={why ?? (busy ? 'Waiting for the archive being written' : title)}
      onClick={() => !above && !busy && actions.door(intent, seq)}
    >
      {actions.busySeq === seq ? 'Archiving…' : label}
    </button>
  );
  return (
    <span class="doors">
      {button('continue', 'Continue with chapters', `Archive this session up to this reply (seq ${seq}) as verbatim chapters and open a new chat with their table of contents`)}
      {button('fork', 'Fork with chapters', `Archive up to this reply (seq ${seq}) and open a branch that tries another angle from here`)}
    </span>
  );
}

function FullText({ row, text, onLink }: { row: Row; text: RowText | { error: string } | undefined; onLink: (url: string) => void }) {
  if (!text) return <p class="quiet">Loading…</p>;
  if ('error' in text) return <p class="error" role="alert">{text.error}</p>;
  const cut = (t: { truncated: boolean; bytes: number }) => t.truncated && <p class="quiet">Shown in part: {formatBytes(t.bytes)} in all. chapters_artifact reads the rest once archived.</p>;
  return (
    <>
      {row.kind === 'tool' && <h4>Input</h4>}
      <pre>
        <TranscriptText text={text.text} onLink={onLink} />
      </pre>
      {cut(text)}
      {text.result && (
        <>
          <h4>
            Result #{text.result.seq} · {formatBytes(text.result.bytes)}
            {text.result.isError ? ' · failed' : ''}
          </h4>
          <pre>
            <TranscriptText text={text.result.text} onLink={onLink} />
          </pre>
          {cut(text.result)}
        </>
      )}
    </>
  );
}

export function ChapterHeader({ chapter, collapsed, rows, onToggle }: { chapter: ChapterSpan; collapsed: boolean; rows: number; onToggle: () => void }) {
  return (
    <div class={`chapter${collapsed ? ' collapsed' : ''}`} data-chapter={chapter.id}>
      <button type="button" class="toggle chapter-toggle" aria-expanded={!collapsed} onClick={onToggle} title={chapter.summary}>
        <span class={`chevron codicon codicon-chevron-${collapsed ? 'right' : 'down'}`} aria-hidden="true" />
        <span class="chapter-badge">Chapter</span>
        <span class="chapter-title">{chapter.title}</span>
      </button>
      <span class="chapter-meta">
        seq {chapter.startSeq}–{chapter.endSeq} · {rows} {rows === 1 ? 'row' : 'rows'} · {chapter.tokens.toLocaleString()} tokens · {chapter.id}
      </span>
    </div>
  );
}
