import { useState } from 'preact/hooks';
import type { MemoryItem, SearchHit } from '../shared/protocol';
import { Snippet, When } from './format';
import { IconButton } from './Section';

/** Ids retire_memory takes; anything else (a search hit's ref of another kind) gets no button. */
const RETIRABLE = /^(fact|entry|note):/;

/** Recent items and search hits share one list: a fact opens its history, a note unfolds. */
export function ItemList({ items, onOpenFact, onRetire }: { items: (MemoryItem | SearchHit)[]; onOpenFact: (item: MemoryItem) => void; onRetire?: (id: string) => void }) {
  return (
    <ul class="items">
      {items.map((item) => (
        <Item key={item.id} item={item} onOpenFact={onOpenFact} onRetire={onRetire} />
      ))}
    </ul>
  );
}

function Item({ item, onOpenFact, onRetire }: { item: MemoryItem | SearchHit; onOpenFact: (item: MemoryItem) => void; onRetire?: ((id: string) => void) | undefined }) {
  const [open, setOpen] = useState(false);
  const snippet = 'snippet' in item && item.snippet ? item.snippet : undefined;
  const isFact = item.kind === 'fact';
  return (
    <li class={`item item-${item.kind}`}>
      <button
        type="button"
        class="item-button"
        data-item={item.id}
        aria-expanded={isFact ? undefined : open}
        title={isFact ? `Show the history of “${item.fact.subject}”` : undefined}
        onClick={() => (isFact ? onOpenFact(item) : setOpen((o) => !o))}
      >
        <span class={`badge badge-${item.kind}`}>{item.kind}</span>
        <span class={`item-text${open ? ' open' : ''}`}>
          {snippet !== undefined && !open ? <Snippet text={snippet} /> : isFact ? <FactText item={item} /> : item.text}
        </span>
        <span class="item-meta">
          <span class="scope">{item.scope}</span> · <When at={item.created_at} />
        </span>
      </button>
      {onRetire && RETIRABLE.test(item.id) && <IconButton icon="archive" className="retire" label={`Retire this ${item.kind}`} onClick={() => onRetire(item.id)} />}
    </li>
  );
}

function FactText({ item }: { item: Extract<MemoryItem, { kind: 'fact' }> }) {
  return (
    <>
      <strong>{item.fact.subject}</strong> {item.fact.predicate} <em>{item.fact.object}</em>
    </>
  );
}
