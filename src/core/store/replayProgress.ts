/**
 * A reporter for StoreOptions.onReplayProgress that writes a line at every tenth of a long
 * replay (a store rebuilt from its journal: another build's text analysis, a damaged or
 * missing snapshot), and nothing for the short tails ordinary opens replay.
 */
export const REPORTED_REPLAY_BYTES = 4 * 1024 * 1024;

export function replayProgressLines(write: (line: string) => void): (doneBytes: number, totalBytes: number, what?: string) => void {
  const lastTenth = new Map<string, number>();
  return (done, total, what) => {
    // A migration that fills a table (`what` says which) reports only when it is long enough to say so.
    if (what === undefined && total < REPORTED_REPLAY_BYTES) return;
    const tenth = Math.floor((done / Math.max(total, 1)) * 10);
    const key = what ?? '';
    if (tenth <= (lastTenth.get(key) ?? -1)) return;
    lastTenth.set(key, tenth);
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    write(what === undefined ? `rebuilding the database and search index from the journal: ${tenth * 10}% (${mb(done)} of ${mb(total)} MB)` : `${what}: ${tenth * 10}%`);
  };
}
