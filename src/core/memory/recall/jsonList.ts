import type { SqlValue } from '../../store/sqlite';

/** A JSON array column (aliases, tags, cites) as strings; anything else reads as empty. */
export function parseList(v: SqlValue | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(String(v ?? '[]'));
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}
