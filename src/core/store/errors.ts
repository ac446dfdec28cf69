/** The store refuses to go on rather than risk replacing real memory with an empty one. */
export class StoreCorruptError extends Error {
  constructor(message: string, readonly path: string) {
    super(message);
    this.name = 'StoreCorruptError';
  }
}

/**
 * The snapshot file is in a format this build does not write (an earlier, unreleased build's, or a
 * newer one's). Like a damaged snapshot it is moved aside and the store rebuilt from its journal.
 */
export class SnapshotFormatError extends StoreCorruptError {
  constructor(message: string, path: string) {
    super(message, path);
    this.name = 'SnapshotFormatError';
  }
}

export class StoreBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreBusyError';
  }
}

/**
 * A write the store could not make and so refused, with nothing half-done left behind: the disk
 * is full, or the store's folder is read-only. Tools answer it as a refusal (`reason`, `budget`),
 * never as a success and never as a crash; reads go on working.
 */
export class WriteRefusedError extends Error {
  constructor(
    /** What went wrong, for a caller that reports it inside a sentence of its own. */
    readonly problem: string,
    /** The whole refusal: the problem, that nothing was saved, and what to do. */
    readonly reason: string,
    readonly budget?: { limit: number; used: number; unit: 'bytes' },
  ) {
    super(reason);
    this.name = 'WriteRefusedError';
  }
}
