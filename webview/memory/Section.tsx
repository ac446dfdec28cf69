import type { ComponentChildren } from 'preact';

interface SectionProps {
  id: string;
  title: string;
  /** A codicon name (without the codicon- prefix). */
  icon: string;
  count: number;
  /** How many there are in all, when more than `count` exist. */
  total?: number;
  collapsed: boolean;
  onToggle: (id: string) => void;
  /** Links beside the heading, outside the toggle button so each is its own tab stop. */
  actions?: ComponentChildren;
  children: ComponentChildren;
}

/** One collapsible section: the heading is a real button, so Tab and Enter/Space reach and fold it. */
export function Section({ id, title, icon, count, total, collapsed, onToggle, actions, children }: SectionProps) {
  const body = `section-${id}`;
  return (
    <section class="section" data-section={id} aria-labelledby={`${body}-head`}>
      <div class="section-head">
        <button type="button" id={`${body}-head`} class="section-toggle" aria-expanded={!collapsed} aria-controls={body} onClick={() => onToggle(id)}>
          <span class={`codicon codicon-chevron-${collapsed ? 'right' : 'down'}`} aria-hidden="true" />
          <span class={`codicon codicon-${icon}`} aria-hidden="true" />
          <span class="section-name">{title}</span>
          <span class="count-badge" title={total !== undefined && total > count ? `${count} shown of ${total}` : undefined}>
            {total !== undefined && total > count ? `${count}/${total}` : count}
          </span>
        </button>
        {actions}
      </div>
      {!collapsed && (
        <div id={body} class="section-body">
          {children}
        </div>
      )}
    </section>
  );
}

/** What a section says when it has nothing: how to get something into it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty section-empty">{children}</p>;
}

/** A small icon-only button; the label is what screen readers and the tooltip say. */
export function IconButton({ icon, label, onClick, className = '' }: { icon: string; label: string; onClick: () => void; className?: string }) {
  return (
    <button type="button" class={`icon-button ${className}`} aria-label={label} title={label} onClick={onClick}>
      <span class={`codicon codicon-${icon}`} aria-hidden="true" />
    </button>
  );
}
