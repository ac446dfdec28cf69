import { refuse, type Refusal } from '../refusal';
import type { Database } from '../store/sqlite';
import { iso } from '../text/time';
import { countTokens } from '../text/tokens';
import { documentHeader, EXPORT_FORMAT, renderItem, sectionHeading, SECTIONS, type Section } from './exportFormat';
import { exportCounts, sectionCount, sectionItems } from './exportItems';

/** Tokens one export reply may hold (manifest + document). */
export const EXPORT_PAGE_TOKENS = 8000;
/** Kept for the manifest, which is rendered after the document is measured. */
const MANIFEST_RESERVE = 600;
const FETCH = 100;

export interface ExportPage {
  ok: true;
  format: typeof EXPORT_FORMAT;
  exported_at: string;
  counts: ReturnType<typeof exportCounts>;
  page: { section: Section; offset: number; items: number; tokens: number; budget_tokens: number; oversized_item?: string };
  /** Set while more remains: call again with section = nextSection and offset = nextItem. */
  nextSection?: Section;
  nextItem?: number;
  complete: boolean;
  document: string;
}

/**
 * One page of the export. Items are whole or absent, never cut: a page ends before the item that
 * would take it over budget, and the manifest says where the next page starts. An item larger
 * than a whole page goes alone on its page (and the manifest names it) rather than being split.
 * Sections are not repeated across pages, so the pages concatenated equal the whole document.
 */
export function exportPage(db: Database, root: string, now: number, section: Section = 'ledger', offset = 0, budget = EXPORT_PAGE_TOKENS): ExportPage | Refusal {
  const total = sectionCount(db, section);
  if (offset > total) return refuse(`offset ${offset} is past the end of section ${section}, which holds ${total} items`, { limit: total, used: offset, unit: 'items' });
  const docBudget = budget - MANIFEST_RESERVE;
  let doc = section === 'ledger' && offset === 0 ? documentHeader() : '';
  let tokens = measure(doc);
  let items = 0;
  let oversized: string | undefined;
  let next: { section: Section; item: number } | undefined;
  let sec: Section = section;
  let at = offset;
  outer: for (let s = SECTIONS.indexOf(section); s < SECTIONS.length; s++) {
    sec = SECTIONS[s] as Section;
    if (sec !== section) at = 0;
    if (at === 0 && sectionCount(db, sec) === 0) {
      // An empty section still shows its heading, so a reader sees it was exported.
      const heading = sectionHeading(sec);
      const t = measure(heading);
      if (items > 0 && tokens + t > docBudget) {
        next = { section: sec, item: 0 };
        break;
      }
      doc += heading;
      tokens += t;
      continue;
    }
    for (;;) {
      const batch = sectionItems(db, root, sec, at, FETCH);
      if (!batch.length) break;
      for (const item of batch) {
        // The heading travels with the section's first item, so a page never ends on a bare heading.
        const text = (at === 0 ? sectionHeading(sec) : '') + renderItem(item);
        const t = measure(text);
        if (tokens + t > docBudget) {
          if (items > 0) {
            next = { section: sec, item: at };
            break outer;
          }
          oversized = `${item.kind} ${item.id}`;
        }
        doc += text;
        tokens += t;
        items++;
        at++;
        if (oversized) {
          next = at < sectionCount(db, sec) ? { section: sec, item: at } : nextSectionAfter(s);
          break outer;
        }
      }
    }
  }
  return {
    ok: true,
    format: EXPORT_FORMAT,
    exported_at: iso(now),
    counts: exportCounts(db),
    page: { section, offset, items, tokens, budget_tokens: budget, ...(oversized ? { oversized_item: oversized } : {}) },
    ...(next ? { nextSection: next.section, nextItem: next.item } : {}),
    complete: next === undefined,
    document: doc,
  };
}

function nextSectionAfter(s: number): { section: Section; item: number } | undefined {
  const following = SECTIONS[s + 1];
  return following ? { section: following, item: 0 } : undefined;
}

/** Tokens as the reply carries them: the document travels JSON-escaped, which costs more than the raw text. */
function measure(text: string): number {
  return text ? countTokens(JSON.stringify(text)) : 0;
}
