import type { Operation } from './journal';

/**
 * What a write decides after seeing the latest state: the operation to journal, or none (a
 * refusal). `undo` takes back what the decision did outside the journal (a line appended to a
 * vault file) when the operation could not be journaled, so nothing unrecorded stays behind.
 */
export type Decision<T> = { op: Operation; result: T; undo?: () => void } | { op?: undefined; result: T };

/** An undo that fails leaves at worst what a crash at the same point would have left; the write is refused either way. */
export function undoQuietly(undo: (() => void) | undefined): void {
  try {
    undo?.();
  } catch {
    // See above.
  }
}
