/** The store refuses to go on rather than risk replacing real memory with an empty one. */
export class StoreCorruptError extends Error {
  constructor(message: string, readonly path: string) {
    super(message);
    this.name = 'StoreCorruptError';
  }
}

export class StoreBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreBusyError';
  }
}
