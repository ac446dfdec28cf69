import type { StoredEvent } from '../history/historySchema';
import { newId } from '../ids';
import type { Store } from '../store/store';
import { queryRows, queryScalar } from '../store/sqlite';
import type { ChildLinked } from './chaptersSchema';
import { parseMarker } from './toc';

/**
 * Called after the importer journals a session's new events: a user message that carries a
 * child's marker makes that session the child's chat. Only user messages count — a tool result
 * that quotes the marker (chapters_continue's own answer) is not a child.
 */
export async function linkImportedSession(store: Store, sessionId: string, events: readonly StoredEvent[]): Promise<void> {
  for (const e of events) {
    if (e.kind !== 'user' || !e.text.includes('[recollect child ')) continue;
    const text = e.blob ? (store.blobs.get(e.blob)?.toString('utf8') ?? e.text) : e.text;
    const parsed = parseMarker(text);
    if (!parsed || parsed.parentSessionId === sessionId) continue;
    await store.commit((db) => {
      const known = queryRows(db, 'SELECT id, linked_session_id FROM child_sessions WHERE marker = ?', [parsed.marker])[0];
      if (known && known.linked_session_id !== null) return { result: undefined };
      const at = store.now;
      const carried = known ? [] : parsed.chapterIds.filter((id) => queryScalar(db, 'SELECT 1 FROM chapters WHERE id = ?', [id]));
      const op: ChildLinked = {
        op: 'chapters.child.linked',
        at,
        marker: parsed.marker,
        sessionId,
        childId: known ? String(known.id) : `rcs_${newId(at)}`,
        parentSessionId: parsed.parentSessionId,
        intent: parsed.intent,
        carried,
      };
      return { op, result: undefined };
    });
    return;
  }
}
