/**
 * A reporter for StoreOptions.onReplayProgress that writes a line at every tenth of a long
 * replay (a store rebuilt from its journal: another build's text analysis, a damaged or
 * missing snapshot), and nothing for the short tails ordinary opens replay.
 */
export const REPORTED_REPLAY_BYTES = 4 * 1024 * 1024;

export function replayProgressLines(write: (line: string) => void): (doneBytes: number, totalBytes: number) => void {
  let lastTenth = -1;
  return (done, total) => {
    if (total < REPORTED_REPLAY_BYTES) return;
    const tenth = Math.floor((done / total) * 10);
    if (tenth <= lastTenth) return;
    lastTenth = tenth;
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    write(`rebuilding the database and search index from the journal: ${tenth * 10}% (${mb(done)} of ${mb(total)} MB)`);
  };
}
