import type { ComponentChildren } from 'preact';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function When({ at, prefix = '' }: { at: string; prefix?: string }) {
  const ms = Date.parse(at);
  return <time dateTime={at} title={at}>{prefix}{Number.isNaN(ms) ? at : dateFormat.format(ms)}</time>;
}

/**
 * The engine marks matched words as [word]. They become <mark> elements, never HTML: the
 * text is whatever an agent or another tool wrote, so it is only ever rendered as text.
 */
export function Snippet({ text }: { text: string }) {
  const parts: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(/\[([^[\]]*)\]/g)) {
    const at = m.index;
    if (at > last) parts.push(text.slice(last, at));
    parts.push(<mark key={at}>{m[1]}</mark>);
    last = at + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return <>{parts}</>;
}
