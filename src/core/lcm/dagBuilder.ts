import { createHash, randomBytes } from 'node:crypto';
import { PendingSyncs } from '../history/pendingSyncs';
import type { Store } from '../store/store';
import { queryRows, queryScalar, type Database, type SqlValue } from '../store/sqlite';
import { countTokens } from '../text/tokens';
import { effectiveTimes, planLeafChunks, type PlanEvent } from './dagPlan';
import { explore, fileNameFor, mimeTypeFor } from './exploration';
import type { LcmConfig } from './lcmConfig';
import { uncondensed, type FileRecord, type SummariesAdded, type SummariesRemoved, type SummaryRecord } from './lcmSchema';
import type { ChildSummary, LeafItem, Summariser } from './summariser';

export interface BuildReport {
  sessions: number;
  leaves: number;
  condensed: number;
  removed: number;
  files: number;
  /** Batches another process had already written; ours were dropped, nothing doubled. */
  raced: number;
}

export function emptyBuildReport(): BuildReport {
  return { sessions: 0, leaves: 0, condensed: 0, removed: 0, files: 0, raced: 0 };
}

/** Summaries are journaled in batches, so a long first build leaves progress behind if it is stopped. */
const BATCH = 8;

interface SessionRow {
  id: string;
  title: string | null;
  startedAt: number | null;
  updatedAt: number | null;
}

/**
 * Builds a session's summary DAG incrementally: stale leaves (their events changed or vanished)
 * go first, with their ancestors; then new leaves over the uncovered archived events; then a
 * condensed summary for every `condenseFanIn` uncondensed ones at a depth. Summarising happens
 * outside the store lock; each batch is re-checked under it, so two processes building the same
 * session never cover an event twice.
 */
export class DagBuilder {
  private readonly running = new Map<string, Promise<BuildReport>>();
  private all: Promise<BuildReport> | undefined;
  private again = false;

  constructor(
    private readonly store: Store,
    private readonly config: () => LcmConfig,
    private readonly summariser: () => Summariser,
  ) {}

  buildFor(sessionId: string): Promise<BuildReport> {
    const prior = this.running.get(sessionId) ?? Promise.resolve(emptyBuildReport());
    const next = prior.catch(() => undefined).then(() => this.build(sessionId));
    this.running.set(sessionId, next);
    void next.finally(() => this.running.get(sessionId) === next && this.running.delete(sessionId)).catch(() => undefined);
    return next;
  }

  /** Every session with work to do. A call during a run is folded into one more run after it. */
  buildAll(): Promise<BuildReport> {
    if (this.all) {
      this.again = true;
      return this.all;
    }
    const run = this.runAll().finally(() => {
      this.all = undefined;
      if (this.again) {
        this.again = false;
        this.buildAll().catch(() => undefined);
      }
    });
    this.all = run;
    return run;
  }

  /** Yields to the event loop between sessions so the host stays responsive. */
  private async runAll(): Promise<BuildReport> {
    const total = emptyBuildReport();
    for (const id of this.sessionsNeedingWork()) {
      const r = await this.buildFor(id);
      for (const k of Object.keys(total) as (keyof BuildReport)[]) total[k] += r[k];
      await new Promise((resolve) => setImmediate(resolve));
    }
    return total;
  }

  sessionsNeedingWork(): string[] {
    const c = this.config();
    const rows = queryRows(
      this.store.db,
      `SELECT session_id FROM (
         SELECT r.session_id FROM (
           SELECT e.id, e.session_id, row_number() OVER (PARTITION BY e.session_id ORDER BY e.seq DESC, e.id DESC) AS from_end FROM events e
         ) r WHERE r.from_end > ? AND NOT EXISTS (SELECT 1 FROM lcm_summary_sources src WHERE src.event_id = r.id)
         UNION
         SELECT s.session_id FROM lcm_summary_sources src JOIN lcm_summaries s ON s.id = src.summary_id
           LEFT JOIN events e ON e.id = src.event_id WHERE e.id IS NULL OR e.hash != src.hash
         UNION
         SELECT s.session_id FROM lcm_summaries s LEFT JOIN lcm_summary_parents p ON p.child_id = s.id
           WHERE p.parent_id IS NULL AND s.depth < ? GROUP BY s.session_id, s.depth HAVING count(*) >= ?
       ) ORDER BY session_id`,
      [c.freshTailEvents, c.maxDepth, c.condenseFanIn],
    );
    return rows.map((r) => String(r.session_id));
  }

  private async build(sessionId: string): Promise<BuildReport> {
    const report = emptyBuildReport();
    const session = this.session(sessionId);
    if (!session) return report;
    report.sessions = 1;
    report.removed = await this.removeStale(sessionId);
    // Each batch's journal sync runs while the next is summarised; the session's build resolves once all are on disk.
    const syncs = new PendingSyncs();
    await this.buildLeaves(session, report, syncs);
    await this.condense(session, report, syncs);
    await syncs.all();
    return report;
  }

  private session(sessionId: string): SessionRow | undefined {
    const r = queryRows(this.store.db, 'SELECT id, title, started_at, updated_at FROM sessions WHERE id = ?', [sessionId])[0];
    if (!r) return undefined;
    return { id: String(r.id), title: str(r.title), startedAt: num(r.started_at), updatedAt: num(r.updated_at) };
  }

  private removeStale(sessionId: string): Promise<number> {
    return this.store.commit((db) => {
      const stale = queryRows(
        db,
        `SELECT DISTINCT src.summary_id AS id FROM lcm_summary_sources src JOIN lcm_summaries s ON s.id = src.summary_id
         LEFT JOIN events e ON e.id = src.event_id WHERE s.session_id = ? AND (e.id IS NULL OR e.hash != src.hash OR e.session_id != s.session_id)`,
        [sessionId],
      ).map((r) => String(r.id));
      if (!stale.length) return { result: 0 };
      const ids = withAncestors(db, stale);
      const op: SummariesRemoved = { op: 'lcm.summaries.removed', at: this.store.now, sessionId, ids };
      return { op, result: ids.length };
    });
  }

  private async buildLeaves(session: SessionRow, report: BuildReport, syncs: PendingSyncs): Promise<void> {
    const config = this.config();
    const db = this.store.db;
    const rows = queryRows(
      db,
      'SELECT id, seq, kind, text, blob, bytes, hash, created_at, tool_name, tool_input, is_error FROM events WHERE session_id = ? ORDER BY seq, id',
      [session.id],
    );
    const times = effectiveTimes(rows.map((r) => num(r.created_at)), session.startedAt ?? session.updatedAt);
    const events: PlanEvent[] = rows.map((r, i) => ({ id: Number(r.id), seq: Number(r.seq), kind: String(r.kind), bytes: Number(r.bytes), hash: String(r.hash), at: times[i] ?? null }));
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const covered = new Set(
      queryRows(db, 'SELECT src.event_id FROM lcm_summary_sources src JOIN lcm_summaries s ON s.id = src.summary_id WHERE s.session_id = ?', [session.id]).map((r) => Number(r.event_id)),
    );
    const active = session.updatedAt !== null && this.store.now - session.updatedAt < config.quietMs;
    const chunks = planLeafChunks(events, covered, config, active);

    let batch: SummaryRecord[] = [];
    let files: FileRecord[] = [];
    let previous = this.previousContent(session.id, 0, chunks[0]?.[0]?.seq ?? 0);
    for (const chunk of chunks) {
      // Summarising is CPU work on the host's thread: give the event loop a turn between leaves.
      await new Promise((resolve) => setImmediate(resolve));
      const items: LeafItem[] = [];
      const fileIds: string[] = [];
      for (const e of chunk) {
        const r = byId.get(e.id) as Record<string, SqlValue>;
        const full = this.fullText(r);
        const file = this.largeFile(session.id, e, r, full);
        if (file) {
          files.push(file);
          fileIds.push(file.id);
        }
        items.push({
          eventId: e.id, kind: e.kind, text: full, toolName: str(r.tool_name), toolInput: str(r.tool_input), isError: Number(r.is_error) === 1, at: e.at,
          file: file ? { id: file.id, name: file.fileName, tokens: file.tokens, exploration: file.exploration } : undefined,
        });
      }
      const known = chunk.map((e) => e.at).filter((t): t is number => t !== null);
      const earliestAt = known.length ? Math.min(...known) : null;
      const latestAt = known.length ? Math.max(...known) : null;
      const { content, producer } = await this.summariser().summarize({
        depth: 0, kind: 'leaf', sessionTitle: session.title, earliestAt, latestAt, items, children: [], previousSummary: previous, targetTokens: config.leafSummaryTokens,
      });
      previous = content;
      batch.push({
        id: newSummaryId(), sessionId: session.id, depth: 0, kind: 'leaf', content, tokens: countTokens(content), earliestAt, latestAt,
        firstSeq: (chunk[0] as PlanEvent).seq, lastSeq: (chunk.at(-1) as PlanEvent).seq, descendantCount: 0,
        sourceBytes: chunk.reduce((n, e) => n + e.bytes, 0), producer, sources: chunk.map((e) => ({ eventId: e.id, hash: e.hash })), childIds: [], fileIds,
      });
      if (batch.length >= BATCH) {
        await this.commitBatch(session.id, batch, files, report, syncs);
        batch = [];
        files = [];
      }
    }
    if (batch.length) await this.commitBatch(session.id, batch, files, report, syncs);
  }

  private async condense(session: SessionRow, report: BuildReport, syncs: PendingSyncs): Promise<void> {
    const config = this.config();
    for (let depth = 0; depth < config.maxDepth; depth++) {
      const open = uncondensed(this.store.db, session.id, depth);
      const groups: string[][] = [];
      for (let i = 0; i + config.condenseFanIn <= open.length; i += config.condenseFanIn) groups.push(open.slice(i, i + config.condenseFanIn).map((s) => s.id));
      let batch: SummaryRecord[] = [];
      for (const group of groups) {
        const children = this.children(group);
        const first = children[0] as Child;
        const previous = batch.at(-1)?.content ?? this.previousContent(session.id, depth + 1, first.firstSeq);
        const known = children.flatMap((c) => [c.earliestAt, c.latestAt]).filter((t): t is number => t !== null);
        const earliestAt = known.length ? Math.min(...known) : null;
        const latestAt = known.length ? Math.max(...known) : null;
        const { content, producer } = await this.summariser().summarize({
          depth: depth + 1, kind: 'condensed', sessionTitle: session.title, earliestAt, latestAt, items: [], children, previousSummary: previous, targetTokens: config.condensedSummaryTokens,
        });
        batch.push({
          id: newSummaryId(), sessionId: session.id, depth: depth + 1, kind: 'condensed', content, tokens: countTokens(content), earliestAt, latestAt,
          firstSeq: Math.min(...children.map((c) => c.firstSeq)), lastSeq: Math.max(...children.map((c) => c.lastSeq)),
          descendantCount: children.reduce((n, c) => n + c.descendantCount + 1, 0), sourceBytes: children.reduce((n, c) => n + c.sourceBytes, 0),
          producer, sources: [], childIds: group, fileIds: [...new Set(children.flatMap((c) => c.fileIds))],
        });
        if (batch.length >= BATCH) {
          await this.commitBatch(session.id, batch, [], report, syncs);
          batch = [];
        }
      }
      if (batch.length) await this.commitBatch(session.id, batch, [], report, syncs);
    }
  }

  private async commitBatch(sessionId: string, summaries: SummaryRecord[], files: FileRecord[], report: BuildReport, syncs: PendingSyncs): Promise<void> {
    const { result: ok, synced } = await this.store.commitSyncingInBackground((db) => {
      if (!stillValid(db, summaries)) return { result: false };
      const op: SummariesAdded = { op: 'lcm.summaries.added', at: this.store.now, sessionId, files, summaries };
      return { op, result: true };
    });
    await syncs.add(synced);
    if (!ok) {
      report.raced++;
      return;
    }
    for (const s of summaries) {
      if (s.kind === 'leaf') report.leaves++;
      else report.condensed++;
    }
    report.files += files.length;
  }

  private previousContent(sessionId: string, depth: number, beforeSeq: number): string | null {
    const v = queryScalar(this.store.db, 'SELECT content FROM lcm_summaries WHERE session_id = ? AND depth = ? AND last_seq < ? ORDER BY last_seq DESC LIMIT 1', [sessionId, depth, beforeSeq]);
    return typeof v === 'string' ? v : null;
  }

  private children(ids: string[]): Child[] {
    return ids.map((id) => {
      const r = queryRows(this.store.db, 'SELECT id, depth, content, earliest_at, latest_at, first_seq, last_seq, descendant_count, source_bytes FROM lcm_summaries WHERE id = ?', [id])[0];
      if (!r) throw new Error(`summary ${id} vanished while condensing`);
      const fileIds = queryRows(this.store.db, 'SELECT file_id FROM lcm_summary_files WHERE summary_id = ?', [id]).map((f) => String(f.file_id));
      return {
        id, depth: Number(r.depth), content: String(r.content), earliestAt: num(r.earliest_at), latestAt: num(r.latest_at), firstSeq: Number(r.first_seq),
        lastSeq: Number(r.last_seq), descendantCount: Number(r.descendant_count), sourceBytes: Number(r.source_bytes), fileIds,
      };
    });
  }

  private fullText(r: Record<string, SqlValue>): string {
    if (typeof r.blob === 'string') {
      const full = this.store.blobs.get(r.blob);
      if (full) return full.toString('utf8');
    }
    return String(r.text ?? '');
  }

  /** Content over the threshold is kept once as a file_…; its id is derived from the event, so a rebuild names it the same. */
  private largeFile(sessionId: string, e: PlanEvent, r: Record<string, SqlValue>, full: string): FileRecord | undefined {
    const threshold = this.config().largeFileTokens;
    // A token is at least one character in practice, so shorter text cannot be over the threshold.
    if (full.length <= threshold) return undefined;
    const tokens = countTokens(full);
    if (tokens <= threshold) return undefined;
    const fileName = fileNameFor(e.id, str(r.tool_name), str(r.tool_input), full);
    return {
      id: 'file_' + createHash('sha256').update(`${sessionId}\0${e.id}\0${e.hash}`).digest('hex').slice(0, 16),
      sessionId, eventId: e.id, blob: typeof r.blob === 'string' ? r.blob : this.store.blobs.put(full), fileName,
      mimeType: mimeTypeFor(fileName, full), byteSize: Buffer.byteLength(full, 'utf8'), tokens, exploration: explore(full, fileName, tokens),
    };
  }
}

interface Child extends ChildSummary {
  firstSeq: number;
  lastSeq: number;
  descendantCount: number;
  sourceBytes: number;
  fileIds: string[];
}

export function newSummaryId(): string {
  return 'sum_' + randomBytes(8).toString('hex');
}

/** Under the lock: every source event unchanged and still uncovered, every child still uncondensed. */
function stillValid(db: Database, summaries: SummaryRecord[]): boolean {
  for (const s of summaries) {
    for (const src of s.sources) {
      if (queryScalar(db, 'SELECT hash FROM events WHERE id = ? AND session_id = ?', [src.eventId, s.sessionId]) !== src.hash) return false;
      if (queryScalar(db, 'SELECT 1 FROM lcm_summary_sources WHERE event_id = ?', [src.eventId]) !== undefined) return false;
    }
    for (const child of s.childIds) {
      if (queryScalar(db, 'SELECT 1 FROM lcm_summaries WHERE id = ?', [child]) === undefined) return false;
      if (queryScalar(db, 'SELECT 1 FROM lcm_summary_parents WHERE child_id = ?', [child]) !== undefined) return false;
    }
  }
  return true;
}

function withAncestors(db: Database, ids: string[]): string[] {
  const all = new Set(ids);
  let frontier = ids;
  while (frontier.length) {
    const parents = queryRows(db, `SELECT DISTINCT parent_id FROM lcm_summary_parents WHERE child_id IN (${frontier.map(() => '?').join(',')})`, frontier).map((r) => String(r.parent_id));
    frontier = parents.filter((p) => !all.has(p));
    for (const p of frontier) all.add(p);
  }
  return [...all];
}

function str(v: SqlValue | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}

function num(v: SqlValue | undefined): number | null {
  return v === null || v === undefined ? null : Number(v);
}
