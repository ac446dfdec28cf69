import type { FactCard, FactVersion, IdTarget } from './protocol';

/** A hover is a glance: a long value shows its start and says how much more there is. */
const VALUE_SHOWN = 300;
const HISTORY_SHOWN = 10;

/**
 * Saved text is other people's and agents' words: every Markdown character is escaped so a
 * value can neither format the hover nor smuggle in a link.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/\r?\n/g, ' ↵ ').replace(/[\\`*_{}[\]()#+\-.!|<>~&:]/g, (c) => `\\${c}`);
}

function value(text: string): string {
  if (text.length <= VALUE_SHOWN) return escapeMarkdown(text);
  return `${escapeMarkdown(text.slice(0, VALUE_SHOWN))}… _(${(text.length - VALUE_SHOWN).toLocaleString('en')} more characters)_`;
}

function when(isoTime: string): string {
  return isoTime.replace('T', ' ').replace(/:\d{2}\.\d{3}Z$/, ' UTC');
}

function currentLine(v: FactVersion, marked: boolean): string {
  return `- **${escapeMarkdown(v.predicate)}**: ${value(v.object)}${marked ? ' ◀' : ''}  \n  _${escapeMarkdown(v.scope)} · since ${when(v.recorded_at)} · by ${escapeMarkdown(v.source)}_`;
}

function historyLine(v: FactVersion, marked: boolean): string {
  const until = v.superseded_at ? ` until ${when(v.superseded_at)}` : '';
  return `- ${escapeMarkdown(v.predicate)}: ~~${value(v.object)}~~${marked ? ' ◀' : ''}  \n  _${escapeMarkdown(v.scope)} · ${when(v.recorded_at)}${until} · by ${escapeMarkdown(v.source)}_`;
}

/** The hover for a subject or a `fact:<id>`: current values, then what they replaced. */
export function renderFactCard(card: FactCard): string {
  const current = card.values.filter((v) => v.status === 'current');
  const past = card.values.filter((v) => v.status !== 'current');
  const parts = [`**${escapeMarkdown(card.subject)}** — ${plural(current.length, 'current value')}${past.length ? `, ${plural(past.length, 'earlier value')}` : ''}`];
  if (card.id && !current.some((v) => v.id === card.id)) parts.push(`_${escapeMarkdown(card.id)} is no longer current; ◀ marks it below._`);
  if (current.length) parts.push(current.map((v) => currentLine(v, v.id === card.id)).join('\n'));
  if (past.length) {
    const shown = past.slice(0, HISTORY_SHOWN).map((v) => historyLine(v, v.id === card.id)).join('\n');
    const rest = past.length > HISTORY_SHOWN ? `\n\n_${past.length - HISTORY_SHOWN} older values are in the memory browser._` : '';
    parts.push(`History:\n\n${shown}${rest}`);
  }
  return parts.join('\n\n');
}

/** The hover for an `entry:` or `note:` id: whether the store holds it and where it lives. */
export function renderIdTarget(t: IdTarget, storeHome: string): string {
  if (!t.exists) return `**${escapeMarkdown(t.id)}** does not exist in the memory store at ${escapeMarkdown(storeHome)}${t.detail ? ` (${escapeMarkdown(t.detail)})` : ''}.`;
  const retired = t.retired ? ' _(retired: out of recall, restorable)_' : '';
  const where = t.file ? `${escapeMarkdown(t.file)}${t.line !== undefined ? `, line ${t.line + 1}` : ''}` : 'not written to the vault yet';
  return `**${escapeMarkdown(t.id)}**${retired}${t.detail ? ` — ${escapeMarkdown(t.detail)}` : ''}  \n_${where}_`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
