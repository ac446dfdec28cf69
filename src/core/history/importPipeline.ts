import { PendingSyncs } from './pendingSyncs';

/**
 * Files journaled together in one line, under one lock hold, by one applier call: each line,
 * lock hold and applier call costs a fixed amount (the applier compiles its statements once per
 * call), which was about a third of a small file's import. Read files wait until this many
 * are ready, so the blob fsyncs of the first overlap the parsing of the rest.
 */
export const BATCH_FILES = 16;
/** The raw bytes of the waiting files past which a batch is journaled early (a huge transcript goes alone, not with fifteen more). */
export const BATCH_BYTES = 16 * 1024 * 1024;

/** The blobs one read file wrote in the background: `ready` once all settled, `landed()` to wait (rejects if one failed). */
export class Landing {
  private done = false;
  private failure: { err: unknown } | undefined;
  private readonly all: Promise<void>;

  constructor(blobs: readonly Promise<void>[]) {
    this.done = blobs.length === 0;
    // Settled into a value at once, so a failure is never an unhandled rejection while it waits.
    this.all = Promise.all(blobs).then(
      () => void (this.done = true),
      (err: unknown) => {
        this.done = true;
        this.failure = { err };
      },
    );
  }

  get ready(): boolean {
    return this.done;
  }

  async landed(): Promise<void> {
    await this.all;
    if (this.failure) throw this.failure.err;
  }
}

export interface WaitingFile {
  blobs: Landing;
  bytes: number;
  /** The sessions the file changes: a later file with one of them goes in a later batch, so its diff sees the earlier file's events. */
  sessionIds: readonly string[];
}

/**
 * Read files wait here, in order, and are journaled in batches once their blobs are on disk, so
 * a line never names a blob a power cut could lose, yet those fsyncs overlap the reading and
 * parsing of the next files instead of stalling each file in turn. Journal fsyncs are left
 * running in `syncs`; `finish` resolves once everything is committed and on disk.
 */
export class ImportPipeline<T extends WaitingFile> {
  readonly syncs = new PendingSyncs();
  private readonly waiting: T[] = [];
  private waitingBytes = 0;

  /** `commit` journals a batch (in file order) once every file in it has landed its blobs. */
  constructor(private readonly commit: (batch: T[]) => Promise<void>) {}

  async add(item: T | undefined): Promise<void> {
    if (item) {
      this.waiting.push(item);
      this.waitingBytes += item.bytes;
    }
    // One turn of the event loop, so the background writes get their completions (reading and
    // parsing is all CPU and would otherwise never let them move on). One turn every 4 files
    // instead was slower (bench, 2 runs each at load ~14: 41–45 s against 31–32 s): the blobs
    // then waited longer and each turn had that much more to do.
    if (this.waiting.some((w) => !w.blobs.ready)) await this.turn();
    while (this.waiting.length >= BATCH_FILES || this.waitingBytes >= BATCH_BYTES) await this.commitBatch();
  }

  /** Journals every waiting file and resolves once all their lines are on disk. */
  async finish(): Promise<void> {
    while (this.waiting.length) await this.commitBatch();
    await this.syncs.all();
  }

  private turn(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  /** The oldest file and those after it whose blobs are on disk, up to a batch, stopping at a session seen earlier in the batch. */
  private async commitBatch(): Promise<void> {
    const batch: T[] = [];
    const sessions = new Set<string>();
    let bytes = 0;
    for (const w of this.waiting) {
      if (batch.length && (!w.blobs.ready || batch.length >= BATCH_FILES || bytes + w.bytes > BATCH_BYTES || w.sessionIds.some((id) => sessions.has(id)))) break;
      batch.push(w);
      bytes += w.bytes;
      for (const id of w.sessionIds) sessions.add(id);
    }
    this.waiting.splice(0, batch.length);
    this.waitingBytes -= bytes;
    if (batch.length) await this.commit(batch);
  }
}
