import type { StoredEvent } from '../history/historySchema';
import type { HistoryService, SessionHint } from '../history/historyService';
import { isRefusal, refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { queryRows } from '../store/sqlite';
import { archiveAndOpen, type ContinueRequest, type ContinueResult } from './archive';
import { artifactRead, artifactSearch, artifactToc, openArtifact } from './artifact';
import { searchArchive, type ArchiveSearchInput } from './archiveSearch';
import type { ChildIntent } from './chaptersSchema';
import { openDoor, type DoorRequest } from './door';
import { forkCitation, type ForkRequest, type ForkResult } from './fork';
import { chaptersOfSession, lineageOf, linkedChild } from './lineage';
import { linkImportedSession } from './linker';
import { readSessionState } from './planning';
import type { PresetName } from './presets';
import { segmentSession } from './segment';

/** What the next session is opened with. VS Code opens a chat; elsewhere nothing can, and the answer says so. */
export interface NextSession {
  childSessionId: string;
  marker: string;
  intent: ChildIntent;
  firstMessage: string;
}

/** How a surface opens the next session. The core never knows which editor (if any) is there. */
export interface NextSessionOpener {
  open(next: NextSession): Promise<{ opened: boolean; how: string }>;
}

/** What a tool answers before the calling window opens the next session and says how (src/host/toolCall.ts replaces it). */
const CALLER_OPENS = 'left to the window that made the call to open';

/** Runs an opener; a failure is said in `how`, never thrown (the archive is written either way). */
export async function openWith(opener: NextSessionOpener, next: NextSession): Promise<{ opened: boolean; how: string }> {
  try {
    return await opener.open(next);
  } catch (err) {
    return { opened: false, how: `opening the next session failed (${err instanceof Error ? err.message : String(err)}): send firstMessage as the first message of a new session` };
  }
}

/** The next session a chapters_continue or chapters_fork answer carries, for the surface that made the call to open; undefined for any other answer. */
export function nextSessionIn(toolName: string, answer: object): NextSession | undefined {
  const intent = toolName === 'chapters_continue' ? 'continue' : toolName === 'chapters_fork' ? 'fork' : undefined;
  const a = answer as Partial<Record<'childSessionId' | 'marker' | 'firstMessage', unknown>> & { ok?: unknown };
  if (!intent || a.ok === false || typeof a.childSessionId !== 'string' || typeof a.marker !== 'string' || typeof a.firstMessage !== 'string') return undefined;
  return { childSessionId: a.childSessionId, marker: a.marker, intent, firstMessage: a.firstMessage };
}

export type ArtifactRequest =
  | { action: 'toc'; ref: string; budget?: number | undefined }
  | { action: 'search'; ref: string; query: string; budget?: number | undefined }
  | { action: 'read'; ref: string; start?: number | undefined; lines?: number | undefined };

/**
 * Chapters: verbatim archives of imported sessions, the child sessions that carry them, and the
 * reads over them. Tools, the chat participant and the session-history view all come through
 * here; nothing in it knows VS Code.
 */
export class ChaptersService {
  private opener: NextSessionOpener | undefined;

  constructor(
    private readonly store: Store,
    private readonly history: HistoryService,
  ) {}

  /** The window that owns the store sets this, for callers without an editor (an MCP server); the CLI and the MCP server leave it unset. */
  useOpener(opener: NextSessionOpener | undefined): void {
    this.opener = opener;
  }

  /** The session a call means: the one it names, else "this session" as chat_history finds it (the answer says how). */
  resolveSession(sessionId: string | undefined, hint: SessionHint): { id: string; how: string } | Refusal {
    if (sessionId) return { id: sessionId, how: 'named by the call' };
    const current = this.history.currentSession(hint);
    if (!current) return refuse('no sessions are imported yet, so there is no "this session": import transcripts first (recollect import, or let the extension import them)');
    return { id: current.id, how: current.how };
  }

  segment(sessionId: string, preset?: PresetName, uptoSeq?: number) {
    return segmentSession(this.store, sessionId, preset, uptoSeq);
  }

  /** Archives the ranges and records the child; does not open anything (see openNext). */
  continue(req: ContinueRequest): Promise<ContinueResult | Refusal> {
    return archiveAndOpen(this.store, req);
  }

  /** Cites the archive as it stands for a branch; writes nothing. */
  fork(req: ForkRequest): ForkResult | Refusal {
    return forkCitation(this.store, req);
  }

  /** The person's door: ranges derived here, up to a row or the ceiling; a fork archives the new span first. */
  door(req: DoorRequest): Promise<ContinueResult | Refusal> {
    return openDoor(this.store, req);
  }

  /** Opens the next session with this process's opener, unless the caller opens it itself (a VS Code window: the answer goes back to it unopened). */
  async openNext(next: NextSession, callerOpens = false): Promise<{ opened: boolean; how: string }> {
    if (callerOpens) return { opened: false, how: CALLER_OPENS };
    if (!this.opener) return { opened: false, how: 'no editor is attached to this process: start a new session and send firstMessage as its first message' };
    return openWith(this.opener, next);
  }

  search(input: ArchiveSearchInput) {
    return searchArchive(this.store, input);
  }

  artifact(req: ArtifactRequest) {
    const a = openArtifact(this.store, req.ref);
    if (isRefusal(a)) return a;
    switch (req.action) {
      case 'toc':
        return artifactToc(a, req.budget);
      case 'search':
        return artifactSearch(a, req.query, req.budget);
      case 'read':
        return artifactRead(a, req.start, req.lines);
    }
  }

  /** For the session-history view: a session's chapters as spans, with the blob each one is. */
  chaptersOf(sessionId: string) {
    return chaptersOfSession(this.store.db, sessionId).map((c) => ({ ...c, path: this.store.blobs.pathOf(c.sha256) }));
  }

  /** The archive ceiling and why, for greying out rows a person cannot archive up to yet. */
  ceiling(sessionId: string) {
    const s = readSessionState(this.store, sessionId);
    if (isRefusal(s)) return s;
    return { ok: true as const, archiveCeiling: s.ceiling.archiveCeiling, openTurn: s.ceiling.openTurn };
  }

  /** Children opened from a session (continue and fork), newest first, with the chat each was linked to. */
  childrenOf(sessionId: string) {
    return queryRows(
      this.store.db,
      'SELECT id, marker, intent, upto_seq, title, created_at, created_by, linked_session_id FROM child_sessions WHERE parent_session_id = ? ORDER BY created_at DESC',
      [sessionId],
    ).map((r) => ({
      id: String(r.id),
      marker: String(r.marker),
      intent: String(r.intent) as ChildIntent,
      uptoSeq: r.upto_seq === null ? null : Number(r.upto_seq),
      title: r.title === null ? null : String(r.title),
      createdAt: Number(r.created_at),
      createdBy: String(r.created_by),
      linkedSessionId: r.linked_session_id === null ? null : String(r.linked_session_id),
    }));
  }

  /** Where a session comes from: its ancestors oldest first, and the child record it was opened as. */
  lineage(sessionId: string) {
    const child = linkedChild(this.store.db, sessionId);
    return { sessions: lineageOf(this.store.db, sessionId), openedAs: child ? { id: child.id, intent: child.intent, parentSessionId: child.parentSessionId, carried: child.carried.length } : null };
  }

  /**
   * The chat a participant request came from, when its transcript is on disk yet: the newest
   * chat of `source` whose latest request holds every needle (the participant's own "@recollect
   * /continue"). VS Code's chat API does not say which session a request belongs to.
   */
  chatEndingWith(needles: readonly string[], source = 'vscode-chat'): { id: string; title: string | null } | undefined {
    const recent = queryRows(this.store.db, 'SELECT id, title FROM sessions WHERE source = ? ORDER BY updated_at DESC LIMIT 10', [source]);
    for (const r of recent) {
      const last = queryRows(this.store.db, "SELECT text FROM events WHERE session_id = ? AND kind = 'user' ORDER BY seq DESC LIMIT 1", [String(r.id)])[0];
      const text = String(last?.text ?? '');
      if (last && needles.every((n) => text.includes(n))) return { id: String(r.id), title: r.title === null ? null : String(r.title) };
    }
    return undefined;
  }

  /** A child's first message, to open it again. */
  firstMessageOf(childSessionId: string): NextSession | undefined {
    const r = queryRows(this.store.db, 'SELECT id, marker, intent, first_message_sha FROM child_sessions WHERE id = ?', [childSessionId])[0];
    const text = r?.first_message_sha ? this.store.blobs.get(String(r.first_message_sha))?.toString('utf8') : undefined;
    return r && text ? { childSessionId: String(r.id), marker: String(r.marker), intent: String(r.intent) as ChildIntent, firstMessage: text } : undefined;
  }

  /** The importer's hook: links a newly imported chat to the child whose marker its first message carries. */
  async linkImported(sessionId: string, events: readonly StoredEvent[]): Promise<void> {
    try {
      await linkImportedSession(this.store, sessionId, events);
    } catch (err) {
      // A missed link is a lost convenience, never a reason to fail the import that found it.
      this.store.warnings.push(`linking ${sessionId} to its parent failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
