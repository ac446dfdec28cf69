import { createHash } from 'node:crypto';
import { newId } from '../../ids';
import { refuse } from '../../refusal';
import type { Database } from '../../store/sqlite';
import type { Store } from '../../store/store';
import { textProblem } from '../../text/textRules';
import { dayIn, iso } from '../../text/time';
import type { EntryFields, NoteAdded } from '../memorySchema';
import { DEFAULT_SCOPE, scopeProblem } from '../scope';
import type { SemanticService } from '../semantic/semanticService';
import { decideIndex, emptyTally, type IndexTally } from './vaultIndexer';
import { dailyPath, vaultRoot } from './vaultLayout';
import type { FileStat } from './vaultSchema';
import { StaleMonitor, vaultVersion, type VaultChange } from './vaultState';
import { appendEntryFile } from './vaultWriter';
import { WriteRefusedError } from '../../store/errors';
import { Redaction } from '../../privacy/redaction';
import { redactVaultFiles } from './vaultRedaction';

export interface EntryInput {
  text: string;
  scope?: string | undefined;
  source?: string | undefined;
  timezone?: string | undefined;
  cites?: string[] | undefined;
  /** YYYY-MM-DD; default today in `timezone`. */
  date?: string | undefined;
}

export interface DecidedEntry {
  op: NoteAdded;
  fields: EntryFields;
  /** The vault version the decision saw, for the stale monitor. */
  versionBefore: number;
  /** Takes the day file's write back if the operation cannot be journaled (Decision.undo). */
  undo: () => void;
  result: { ok: true; saved: 'note'; id: string; path: string; day: string; scope: string; source: string; recorded_at: string; warning?: string };
}

/** One index_memory commit holds at most this many files or bytes, so no journal line grows huge. */
const INDEX_BATCH_FILES = 200;
const INDEX_BATCH_BYTES = 8 * 1024 * 1024;

/**
 * The Markdown vault: day-log entries written as the store records them, the index following
 * what a person edits, and whether the two differ right now (`index.stale`). The journal is
 * the source of truth for what tools saved; the files are where people read and edit it.
 */
export class VaultService {
  readonly root: string;
  readonly monitor: StaleMonitor;

  constructor(
    private readonly store: Store,
    private readonly semantic?: SemanticService,
    private readonly redaction: Redaction = new Redaction(),
  ) {
    this.root = vaultRoot(store.home);
    this.monitor = new StaleMonitor(store, this.root);
  }

  /** `{ stale, changed_files }` as every read reports it. */
  index(): { stale: boolean; changed_files: number } {
    const s = this.monitor.check();
    return { stale: s.stale, changed_files: s.changed_files };
  }

  /** remember_note: one line (or block) in a day's log; the refusals of a statement saved alone apply. */
  async rememberNote(input: EntryInput, client: string) {
    const problem = textProblem('text', input.text);
    if (problem) return refuse(`${problem}. Nothing was saved.`);
    if (!input.text.trim()) return refuse('text is only whitespace. Nothing was saved.');
    if (input.date !== undefined && !isCalendarDate(input.date)) return refuse(`date "${input.date.slice(0, 40)}" is not a calendar date written YYYY-MM-DD. Nothing was saved.`);
    const saved = await this.addEntry(input, client, null);
    return saved.ok ? { ...saved, saved: 'entry' as const } : saved;
  }

  /** Records one entry and writes it to its day's file. Validation of the text is the caller's. */
  async addEntry(input: EntryInput, client: string, factId: string | null) {
    const scope = input.scope ?? DEFAULT_SCOPE;
    const bad = scopeProblem(scope) ?? timezoneProblem(input.timezone);
    if (bad) return refuse(`${bad}. Nothing was saved.`);
    const text = await this.redaction.text(input.text, scope);
    const decided = await this.store.commit((db) => {
      const entry = this.decideEntry(db, { ...input, text }, client, factId, this.store.now);
      return { op: entry.op, result: entry, undo: entry.undo };
    });
    this.entryCommitted(decided);
    return decided.result;
  }

  /**
   * The part of adding an entry that runs inside `Store.commit`'s decide, under the lock: writes
   * the day file and returns the operation that records it, so a caller can journal the entry
   * alone or inside an operation of its own (a fact with its sentence: one line, one fsync).
   * Scope and timezone are the caller's to check. After the commit, call `entryCommitted`.
   */
  decideEntry(db: Database, input: EntryInput, client: string, factId: string | null, at: number): DecidedEntry {
    const scope = input.scope ?? DEFAULT_SCOPE;
    const source = input.source ?? client;
    const versionBefore = vaultVersion(db);
    const day = input.date ?? (dayIn(at, input.timezone) as string);
    const path = dailyPath(scope, day);
    const anchor = createHash('sha256').update(newId(at)).update(input.text).digest('hex').slice(0, 12);
    const id = `entry:${path}#${anchor}`;
    let file: FileStat | null = null;
    let fileError: string | undefined;
    let undo = () => undefined as void;
    try {
      ({ file, undo } = appendEntryFile(db, this.root, path, day, { anchor, at, timezone: input.timezone ?? null, source, text: input.text }));
    } catch (err) {
      // The store keeps the entry either way; index_memory writes the file once it can.
      fileError = `the entry is saved but its day file could not be written: ${err instanceof WriteRefusedError ? err.problem : (err as Error).message}`;
    }
    const fields: EntryFields = { id, path, day, text: input.text, scope, source, timezone: input.timezone ?? null, cites: input.cites ?? [], factId, file };
    return {
      op: { op: 'memory.note.added', at, ...fields },
      fields,
      versionBefore,
      undo,
      result: { ok: true as const, saved: 'note' as const, id, path, day, scope, source, recorded_at: iso(at), ...(fileError ? { warning: fileError } : {}) },
    };
  }

  /** Once the entry's operation is durable: the stale monitor takes the day file's new stat. */
  entryCommitted(entry: DecidedEntry): void {
    this.monitor.ownWrite(entry.result.path, entry.versionBefore, entry.result.warning !== undefined);
  }

  /** index_memory: re-reads every vault file that changed since it was last indexed. */
  async reindex() {
    const before = this.monitor.scan();
    const tally = await this.indexChanges(before.changes, before.listed);
    const embeddings = this.semantic?.configured ? await this.semantic.backfill(Number.MAX_SAFE_INTEGER) : undefined;
    const after = this.index();
    return {
      ok: true as const,
      vault: this.root,
      files: tally.files,
      entries: tally.entries,
      chunks_indexed: tally.chunks,
      skipped: tally.skipped.slice(0, 50),
      ...(tally.skipped.length > 50 ? { more_skipped: tally.skipped.length - 50 } : {}),
      embeddings: embeddings ?? { configured: false, reason: this.semantic?.state().reason ?? 'no embedding provider is configured' },
      index: after,
    };
  }

  /** Indexes the given paths if they changed (before a retire or restore touches them). */
  async indexPaths(paths: readonly string[]): Promise<IndexTally> {
    const scan = this.monitor.scan();
    const wanted = new Set(paths);
    return this.indexChanges(scan.changes.filter((c) => wanted.has(c.path)), scan.listed);
  }

  private async indexChanges(changes: readonly VaultChange[], listed: readonly { path: string; size: number }[]): Promise<IndexTally> {
    // A secret a person typed into a note is replaced in the file itself before it is read for the index.
    await redactVaultFiles(this.root, changes, this.redaction);
    const sizes = new Map(listed.map((f) => [f.path, f.size]));
    const tally = emptyTally();
    let batch: VaultChange[] = [];
    let bytes = 0;
    const flush = async () => {
      if (!batch.length) return;
      const todo = batch;
      batch = [];
      bytes = 0;
      await this.store.commit((db) => {
        const op = decideIndex(db, this.root, todo, this.store.now, tally);
        return op ? { op, result: undefined } : { result: undefined };
      });
    };
    for (const c of changes) {
      const size = sizes.get(c.path) ?? 0;
      if (batch.length >= INDEX_BATCH_FILES || (batch.length && bytes + size > INDEX_BATCH_BYTES)) await flush();
      batch.push(c);
      bytes += size;
    }
    await flush();
    this.monitor.invalidate();
    return tally;
  }
}

export function timezoneProblem(timezone: string | undefined): string | undefined {
  if (timezone === undefined || dayIn(0, timezone) !== undefined) return undefined;
  if (/^[+-]\d{2}:?\d{2}$/.test(timezone)) return `timezone "${timezone}" is not a UTC offset any place uses: offsets run from -12:00 to +14:00, with minutes under 60`;
  return `timezone "${timezone.slice(0, 60)}" is neither an IANA name (America/Sao_Paulo) nor an offset (-03:00)`;
}

function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === s;
}
