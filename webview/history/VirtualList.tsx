import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { indexAt } from './items';

/** Rows drawn beyond each edge of the viewport, so a quick flick does not show blank space. */
const OVERSCAN_PX = 600;

export interface VirtualListProps {
  count: number;
  /** offsets[i] is where item i starts; offsets[count] is the whole height (items.ts). */
  offsets: Float64Array;
  renderItem: (index: number) => ComponentChildren;
  keyOf: (index: number) => string;
  /** Where to be scrolled to when the list (re)appears or the target changes: a saved position, or a row to reveal. */
  scrollTo: { top: number; token: number };
  onScroll: (top: number) => void;
  label: string;
}

/**
 * Only the items within the viewport (plus a margin) are in the DOM; a spacer as tall as the
 * whole list keeps the scrollbar honest. Heights are known from the start (fixed per kind and
 * state), so scrolling never measures and never jumps.
 */
export function VirtualList({ count, offsets, renderItem, keyOf, scrollTo, onScroll, label }: VirtualListProps) {
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: scrollTo.top, height: 800 });
  const frame = useRef(0);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    el.scrollTop = scrollTo.top;
    setView({ top: el.scrollTop, height: el.clientHeight || 800 });
  }, [scrollTo.token]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const resize = new ResizeObserver(() => setView((v) => ({ ...v, height: el.clientHeight })));
    resize.observe(el);
    return () => {
      resize.disconnect();
      cancelAnimationFrame(frame.current);
    };
  }, []);

  const scrolled = () => {
    // One update per frame however many scroll events arrive.
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      const el = box.current;
      if (!el) return;
      setView({ top: el.scrollTop, height: el.clientHeight });
      onScroll(el.scrollTop);
    });
  };

  const total = offsets[count] ?? 0;
  const first = count ? indexAt(offsets, Math.max(0, view.top - OVERSCAN_PX)) : 0;
  const shown: ComponentChildren[] = [];
  for (let i = first; i < count && (offsets[i] as number) < view.top + view.height + OVERSCAN_PX; i++) {
    const top = offsets[i] as number;
    shown.push(
      <div class="slot" key={keyOf(i)} role="listitem" style={{ transform: `translateY(${top}px)`, height: `${(offsets[i + 1] as number) - top}px` }}>
        {renderItem(i)}
      </div>,
    );
  }
  return (
    <div class="virtual" ref={box} onScroll={scrolled} tabIndex={0} aria-label={label} role="list" data-count={count}>
      <div class="spacer" style={{ height: `${total}px` }}>
        {shown}
      </div>
    </div>
  );
}
