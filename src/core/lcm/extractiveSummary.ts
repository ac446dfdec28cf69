import { countTokens } from '../text/tokens';
import type { ChildSummary, SummaryRequest } from './summariser';

/**
 * The summariser that needs no model: it picks lines from the sources in a fixed priority
 * (requests, errors and large files first, then replies, then tool calls) until the budget is
 * spent, keeps them in their original order, and names everything it left out in the footer.
 * Deterministic, so the DAG exists offline, in the CLI, in the MCP server and in tests.
 */
const FOOTER = 'Expand for details about:';
const NOTHING_LEFT = 'the verbatim messages';

interface Candidate {
  text: string;
  priority: number;
  order: number;
  /** How the footer names this line when it does not fit. */
  label: string;
}

export function extractiveSummary(req: SummaryRequest): string {
  return req.kind === 'leaf' ? leafSummary(req) : condensedSummary(req);
}

function leafSummary(req: SummaryRequest): string {
  const previous = new Set((req.previousSummary ?? '').split('\n').map((l) => l.trim()));
  const candidates: Candidate[] = [];
  const left = new Counter();
  const outputs = new Counter();
  const paths = new Set<string>();
  req.items.forEach((item, order) => {
    const add = (text: string, priority: number, label: string) => {
      if (previous.has(text.trim())) left.add(`{${label}|# lines} already summarised just before`);
      else candidates.push({ text, priority, order, label });
    };
    const tool = item.toolName ?? 'a tool';
    switch (item.kind) {
      case 'user': {
        add(`- Asked: ${oneLine(item.text, 280)}`, 0, 'a request|# more requests');
        if (item.text.length > 280 && flat(item.text).length > 280) left.add('the full text of {a request|# requests}');
        break;
      }
      case 'assistant': {
        if (!item.text.trim()) break;
        add(`- Replied: ${firstSentences(item.text, 220)}`, 2, 'a reply|# replies');
        if (item.text.length > 220 && flat(item.text).length > 220) left.add('the rest of {a reply|# replies}');
        break;
      }
      case 'tool_call': {
        const args = argSummary(item.toolInput, paths);
        add(`- Called ${tool}${args ? ` (${args})` : ''}`, 3, `a call of ${tool}|# calls of ${tool}`);
        break;
      }
      case 'tool_result': {
        if (item.file) add(`- Output of ${tool} kept as ${item.file.id} (${item.file.name}, ${item.file.tokens} tokens)`, 1, `file ${item.file.id}|# files`);
        else if (item.isError) add(`- Error from ${tool}: ${oneLine(item.text, 220)}`, 1, `an error from ${tool}|# errors from ${tool}`);
        else if (item.text.trim()) outputs.add(tool);
        break;
      }
      case 'reasoning':
        if (item.text.trim()) left.add('{a reasoning note|# reasoning notes}');
        break;
      case 'summary':
        add(`- Earlier summary by the agent: ${oneLine(item.text, 200)}`, 2, 'an earlier summary by the agent|# earlier summaries by the agent');
        break;
      default:
        if (item.text.trim()) left.add('{a system notice|# system notices}');
    }
  });
  const kinds = new Counter();
  for (const i of req.items) kinds.add(i.kind);
  const header = `${range(req.earliestAt, req.latestAt)}: ${plural(req.items.length, 'message')} (${plural(kinds.get('user'), 'request')}, ${plural(kinds.get('tool_call'), 'tool call')}, ${plural(kinds.get('assistant'), 'reply', 'replies')})${req.sessionTitle ? ` in "${oneLine(req.sessionTitle, 80)}"` : ''}.`;
  const kept = fit(candidates, req.targetTokens - countTokens(header) - 80, left);
  for (const [tool, n] of outputs.entries()) left.add(`output of ${tool}${n > 1 ? ` ×${n}` : ''}`);
  if (paths.size) left.add(`paths: ${[...paths].slice(0, 8).join(', ')}${paths.size > 8 ? ` and ${paths.size - 8} more` : ''}`);
  return [header, ...kept.map((c) => c.text), footer(left.describe())].join('\n');
}

function condensedSummary(req: SummaryRequest): string {
  // Fewer lines per child the higher the level: each level is more abstract than the last.
  const perChild = Math.max(1, 4 - req.depth);
  const previous = new Set((req.previousSummary ?? '').split('\n').map((l) => l.trim()));
  const candidates: Candidate[] = [];
  const left = new Counter();
  const inherited: string[] = [];
  let order = 0;
  for (const child of req.children) {
    const { body, footerItems } = split(child);
    inherited.push(...footerItems);
    // Headings of grandchildren only name ids; the lines under them carry the content.
    const ranked = body
      .filter((line) => !/^\s*sum_[0-9a-f]{16} \(/.test(line))
      .map((line, i) => ({ line, i, rank: /^\s*- (Asked|Error|Output of .* kept as file_)/.test(line) ? 0 : 1 }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i);
    const chosen = ranked.slice(0, perChild).sort((a, b) => a.i - b.i);
    if (body.length > chosen.length) left.add(`${body.length - chosen.length} more line${body.length - chosen.length === 1 ? '' : 's'} of ${child.id}`);
    candidates.push({ text: `${child.id} (${range(child.earliestAt, child.latestAt)}):`, priority: 0, order: order++, label: `the heading of ${child.id}|# headings` });
    for (const c of chosen) {
      const text = `  ${oneLine(c.line.trim(), 240)}`;
      if (previous.has(text.trim())) continue;
      candidates.push({ text, priority: 1 + c.rank, order: order++, label: `a line of ${child.id}|# lines of ${child.id}` });
    }
  }
  const header = `${range(req.earliestAt, req.latestAt)}: condensed from ${plural(req.children.length, 'summary', 'summaries')} at depth ${req.depth - 1}${req.sessionTitle ? ` in "${oneLine(req.sessionTitle, 80)}"` : ''}.`;
  const kept = fit(candidates, req.targetTokens - countTokens(header) - 120, left);
  for (const item of dedupe(inherited).filter((i) => !i.startsWith(NOTHING_LEFT)).slice(0, 12)) left.add(item);
  return [header, ...kept.map((c) => c.text), footer(left.describe())].join('\n');
}

/** Keeps the best-priority candidates that fit, in their original order; the rest are counted for the footer. */
function fit(candidates: Candidate[], budget: number, left: Counter): Candidate[] {
  const byPriority = [...candidates].sort((a, b) => a.priority - b.priority || a.order - b.order);
  const kept: Candidate[] = [];
  let used = 0;
  for (const c of byPriority) {
    const cost = countTokens(c.text) + 1;
    if (used + cost <= budget) {
      kept.push(c);
      used += cost;
    } else left.add(c.label);
  }
  return kept.sort((a, b) => a.order - b.order);
}

function footer(items: string[]): string {
  return `${FOOTER} ${items.length ? items.join('; ') : `${NOTHING_LEFT} (nothing else was left out)`}.`;
}

function split(child: ChildSummary): { body: string[]; footerItems: string[] } {
  const lines = child.content.split('\n').filter((l) => l.trim());
  const at = lines.findIndex((l) => l.startsWith(FOOTER));
  const body = (at >= 0 ? lines.slice(0, at) : lines).slice(1);
  const footerText = at >= 0 ? lines.slice(at).join(' ').slice(FOOTER.length).trim().replace(/\.$/, '') : '';
  return { body, footerItems: footerText ? footerText.split('; ').map((s) => s.trim()).filter(Boolean) : [] };
}

/**
 * Counts like items so the footer reads as a list, not a log. A label is "one|many" (many
 * with # for the count), or holds {one|many} inside it; a plain label is counted as "×n".
 */
class Counter {
  private readonly counts = new Map<string, number>();
  add(label: string, n = 1): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + n);
  }
  get(label: string): number {
    return this.counts.get(label) ?? 0;
  }
  entries(): [string, number][] {
    return [...this.counts.entries()];
  }
  describe(): string[] {
    return this.entries().map(([label, n]) => countLabel(label, n));
  }
}

export function countLabel(label: string, n: number): string {
  const pick = (one: string, many: string) => (n === 1 ? one : many.replace('#', String(n)));
  if (/\{[^{}|]*\|[^{}]*\}/.test(label)) return label.replace(/\{([^{}|]*)\|([^{}]*)\}/g, (_m, one: string, many: string) => pick(one, many));
  const bar = label.indexOf('|');
  if (bar >= 0) return pick(label.slice(0, bar), label.slice(bar + 1));
  return n === 1 ? label : `${label} ×${n}`;
}

function argSummary(toolInput: string | null, paths: Set<string>): string {
  if (!toolInput) return '';
  let value: unknown;
  try {
    value = JSON.parse(toolInput);
  } catch {
    return oneLine(toolInput, 100);
  }
  if (typeof value !== 'object' || value === null) return oneLine(String(value), 100);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const words = Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(' ') : undefined;
    if (words === undefined && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
    const text = words ?? String(v);
    if (/path|file|uri|dir/i.test(k) && typeof v === 'string') paths.add(text);
    parts.push(`${k}: ${oneLine(text, 80)}`);
    if (parts.length === 3) break;
  }
  return oneLine(parts.join(', '), 140);
}

function flat(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function oneLine(text: string, max: number): string {
  // Only the head is ever shown, so a megabyte of output is not rewritten to find it.
  const t = flat(text.length > max * 4 ? text.slice(0, max * 4) : text);
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

function firstSentences(text: string, max: number): string {
  const t = flat(text.length > max * 4 ? text.slice(0, max * 4) : text);
  if (t.length <= max) return t;
  const cut = t.slice(0, max);
  const end = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('! '), cut.lastIndexOf('? '));
  return end > max / 3 ? cut.slice(0, end + 1) : `${cut.slice(0, max - 1)}…`;
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

function dedupe(items: string[]): string[] {
  return [...new Set(items)];
}

/** "2025-11-17 15:30–15:38 UTC", or both dates when they differ. */
export function range(from: number | null, to: number | null): string {
  if (from === null || to === null) return 'time unknown';
  const a = new Date(from).toISOString();
  const b = new Date(to).toISOString();
  const day = (s: string) => s.slice(0, 10);
  const hm = (s: string) => s.slice(11, 16);
  return day(a) === day(b) ? `${day(a)} ${hm(a)}–${hm(b)} UTC` : `${day(a)} ${hm(a)} → ${day(b)} ${hm(b)} UTC`;
}

