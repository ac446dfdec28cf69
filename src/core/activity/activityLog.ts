import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileLock } from '../store/fileLock';
import { activityRow, type ActivityRow, type ToolCall } from './activityRow';

export type { ActivityRow, ToolCall } from './activityRow';

/** The newest rows; once adding a row would take it past FILE_BYTES it becomes PREVIOUS, replacing the older one. */
export const ACTIVITY_FILE = 'activity.jsonl';
export const ACTIVITY_PREVIOUS = 'activity.1.jsonl';
const ROTATE_LOCK = 'activity.lock';
/** Each of the two files stays under this: five hundred calls or so each (a row is ~300 to 1,500 bytes). */
const FILE_BYTES = 256 * 1024;

export interface ActivityPage {
  /** Newest first. */
  rows: ActivityRow[];
  /** Rows the log holds in all. */
  total: number;
  /** Lines that could not be read as a row (a write torn by a crash, a line cut by a concurrent rotation). */
  unreadable: number;
}

/**
 * Recollect's log of its own tool calls, for a person to look at. It lives beside the store, not
 * in it: a call is not memory, so it never enters the journal (a read writes nothing durable and
 * leaves `store.version` alone), the history index, the summary DAG or any session list, and no
 * search has to take it back out. Every process on the store home appends to the same two files,
 * each bounded, so the log holds the newest calls in at most 2 × FILE_BYTES. It is not synced: a
 * crash may lose the last rows, which nobody was told were kept.
 */
export class ActivityLog {
  private readonly file: string;
  private readonly previous: string;
  private readonly lock: FileLock;

  constructor(
    home: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = path.join(home, ACTIVITY_FILE);
    this.previous = path.join(home, ACTIVITY_PREVIOUS);
    this.lock = new FileLock(path.join(home, ROTATE_LOCK));
  }

  /** The most the log holds on disk, give or take a row from each process appending during a rotation. */
  get maxBytes(): number {
    return 2 * FILE_BYTES;
  }

  /** The one place a call becomes a row on disk: excerpted, bounded, appended in one write. */
  async record(call: ToolCall): Promise<void> {
    const line = JSON.stringify(activityRow(call, this.now())) + '\n';
    const bytes = Buffer.byteLength(line, 'utf8');
    if (sizeOf(this.file) + bytes > FILE_BYTES) await this.rotate(bytes);
    fs.appendFileSync(this.file, line, { mode: 0o600 });
  }

  /** The newest `limit` rows of every process on this store home. */
  recent(limit: number): ActivityPage {
    const rows: ActivityRow[] = [];
    let unreadable = 0;
    for (const file of [this.previous, this.file]) {
      for (const line of readLines(file)) {
        const row = parseRow(line);
        if (row) rows.push(row);
        else unreadable++;
      }
    }
    return { rows: rows.reverse().slice(0, Math.max(0, limit)), total: rows.length, unreadable };
  }

  /**
   * Removes the rows whose input or result excerpt names any of `terms` (a forgotten session's
   * ids): a call that read a session quoted it here. Both files are rewritten under the rotation
   * lock; a row another process appends in that instant may be lost, as a crash may lose one.
   * Resolves to how many rows went.
   */
  async dropRowsNaming(terms: readonly string[]): Promise<number> {
    const wanted = terms.filter((t) => t.length >= 6);
    if (!wanted.length) return 0;
    return this.lock.withLock(() => {
      let dropped = 0;
      for (const file of [this.previous, this.file]) {
        const lines = readLines(file);
        const kept = lines.filter((line) => {
          const row = parseRow(line);
          return !row || !wanted.some((t) => row.input.includes(t) || row.result.includes(t));
        });
        if (kept.length === lines.length) continue;
        dropped += lines.length - kept.length;
        const tmp = `${file}.tmp-${process.pid}`;
        fs.writeFileSync(tmp, kept.map((l) => l + '\n').join(''), { mode: 0o600 });
        fs.renameSync(tmp, file);
      }
      return dropped;
    });
  }

  /** Under a lock, so two processes past the limit at once do not both rename (the second would set aside a file of a row or two). */
  private async rotate(bytes: number): Promise<void> {
    await this.lock.withLock(() => {
      if (sizeOf(this.file) + bytes <= FILE_BYTES) return;
      try {
        fs.renameSync(this.file, this.previous);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    });
  }
}

function sizeOf(file: string): number {
  return fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

function readLines(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text.split('\n').filter((l) => l.length > 0);
}

function parseRow(line: string): ActivityRow | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  const r = v as Partial<ActivityRow> | null;
  if (!r || typeof r.at !== 'string' || typeof r.client !== 'string' || typeof r.tool !== 'string' || typeof r.ok !== 'boolean') return undefined;
  return { at: r.at, client: r.client, tool: r.tool, ok: r.ok, ms: Number(r.ms) || 0, input: String(r.input ?? ''), result: String(r.result ?? '') };
}
