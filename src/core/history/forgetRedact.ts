import type { ChaptersArchived, ChildLinked } from '../chapters/chaptersSchema';
import type { SummariesAdded, SummariesRemoved } from '../lcm/lcmSchema';
import type { Operation } from '../store/journal';
import type { Redact } from '../store/journalSegments';
import type { FileImported, FilesImported, SessionChange } from './historySchema';
import type { RunsWithheld } from './withheldRuns';

/**
 * How the journal's earlier lines are rewritten once sessions are forgotten: a line about one
 * of them goes, a batch keeps its other files' sessions. What is left replays, followed by the
 * `history.sessions.forgotten` line itself, to the state the store holds after the forget.
 */
export function forgetSessionsRedactor(ids: ReadonlySet<string>): Redact {
  const gone = (id: unknown) => typeof id === 'string' && ids.has(id);
  // Every line about a session names its id (session.id, sessionId, parentSessionId), in JSON quotes.
  const mentions = [...ids].map((id) => JSON.stringify(id));
  const apply = (op: Operation): Operation | 'drop' | undefined => {
    switch (op.op) {
      case 'history.file.imported': {
        const f = op as FileImported;
        const kept = f.sessions.filter((s) => !gone(s.session.id));
        return kept.length === f.sessions.length ? undefined : { ...f, sessions: kept };
      }
      case 'history.files.imported': {
        const f = op as FilesImported;
        let changed = false;
        const files = f.files.map((file) => {
          const kept = file.sessions.filter((s) => !gone(s.session.id));
          if (kept.length === file.sessions.length) return file;
          changed = true;
          return { ...file, sessions: kept };
        });
        return changed ? { ...f, files } : undefined;
      }
      case 'history.runs.withheld':
        return gone((op as RunsWithheld).sessionId) ? 'drop' : undefined;
      case 'lcm.summaries.added':
      case 'lcm.summaries.removed':
        return gone((op as SummariesAdded | SummariesRemoved).sessionId) ? 'drop' : undefined;
      case 'chapters.archived': {
        const a = op as ChaptersArchived;
        return gone(a.child.parentSessionId) || a.chapters.some((c) => gone(c.sessionId)) ? 'drop' : undefined;
      }
      case 'chapters.child.linked': {
        const l = op as ChildLinked;
        return gone(l.sessionId) || gone(l.parentSessionId) ? 'drop' : undefined;
      }
      default:
        return undefined;
    }
  };
  return { mentions, apply };
}

/**
 * The journal's import lines with the raw tool outputs that `history.tool_outputs.dropped`
 * emptied emptied there too (same choice: tool results timed before `before`, of the sources
 * named). Keys, hashes and sizes stay, so a re-import finds nothing changed.
 */
export function dropOutputsRedactor(before: number, sources: readonly string[] | null): Redact {
  const drops = (change: SessionChange) => (sources === null || sources.includes(change.session.source)) && change.upserts.some((e) => droppable(e, before));
  const emptied = (change: SessionChange): SessionChange => ({ ...change, upserts: change.upserts.map((e) => (droppable(e, before) ? { ...e, text: '', blob: null } : e)) });
  const sessions = (list: SessionChange[]) => (list.some(drops) ? list.map((c) => (drops(c) ? emptied(c) : c)) : undefined);
  const apply = (op: Operation): Operation | 'drop' | undefined => {
    switch (op.op) {
      case 'history.file.imported': {
        const f = op as FileImported;
        const kept = sessions(f.sessions);
        return kept ? { ...f, sessions: kept } : undefined;
      }
      case 'history.files.imported': {
        const f = op as FilesImported;
        let changed = false;
        const files = f.files.map((file) => {
          const kept = sessions(file.sessions);
          if (!kept) return file;
          changed = true;
          return { ...file, sessions: kept };
        });
        return changed ? { ...f, files } : undefined;
      }
      default:
        return undefined;
    }
  };
  return { mentions: ['"tool_result"'], apply };
}

function droppable(e: SessionChange['upserts'][number], before: number): boolean {
  return e.kind === 'tool_result' && e.at !== null && e.at < before && (e.text !== '' || e.blob !== null);
}
