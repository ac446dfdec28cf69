import type { ComponentChildren } from 'preact';
import { isWebLink } from '../shared/historyProtocol';

// The memory browser's: search excerpts mark matched words the same way in every index.
export { Snippet } from '../memory/format';

/** Bare http(s) URLs, ending before whitespace, quotes, angle brackets and closing brackets. */
const URL_RE = /\bhttps?:\/\/[^\s<>"'`)\]]+/g;

/**
 * Transcript text as text. Everything an agent, a tool or a web page wrote is untrusted, so
 * nothing here becomes markup: Preact sets it as text nodes, a markdown link stays its
 * characters, and only a bare http(s) URL becomes a button that asks the host to open it
 * (VS Code then asks the person). javascript:, data:, file: and command: links are never made.
 */
export function TranscriptText({ text, onLink }: { text: string; onLink: (url: string) => void }) {
  const parts: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(URL_RE)) {
    const url = m[0].replace(/[.,;:!?]+$/, '');
    const at = m.index;
    if (!isWebLink(url)) continue;
    if (at > last) parts.push(text.slice(last, at));
    parts.push(
      <button type="button" class="link" key={at} title={`Open ${url} (VS Code asks first)`} onClick={() => onLink(url)}>
        {url}
      </button>,
    );
    last = at + url.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return <>{parts}</>;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

export function When({ at, timeOnly = false }: { at: string | null; timeOnly?: boolean }) {
  if (!at) return null;
  const ms = Date.parse(at);
  return (
    <time dateTime={at} title={at}>
      {Number.isNaN(ms) ? at : (timeOnly ? timeFormat : dateFormat).format(ms)}
    </time>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
