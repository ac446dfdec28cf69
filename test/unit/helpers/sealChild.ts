/**
 * A separate process that seals a store's journal and kills itself (SIGKILL, no cleanup) at the
 * named step: `node sealChild.js <home> <upTo> <step|none>`. Bundled by the test that runs it.
 */
import * as path from 'node:path';
import { FileLock } from '../../../src/core/store/fileLock';
import { SEALED_DIR } from '../../../src/core/store/journal';
import { sealJournal, type SealStep } from '../../../src/core/store/journalSeal';

async function main(): Promise<void> {
  const [home, upTo, dieAt] = process.argv.slice(2);
  if (!home || !upTo || !dieAt) throw new Error('usage: sealChild <home> <upTo> <step|none>');
  const result = await sealJournal({
    journalPath: path.join(home, 'journal.jsonl'),
    sealedDir: path.join(home, SEALED_DIR),
    lock: new FileLock(path.join(home, 'journal.lock')),
    upTo: Number(upTo),
    minBytes: 1,
    onStep: (step: SealStep) => {
      if (step === dieAt) process.kill(process.pid, 'SIGKILL');
    },
  });
  process.stdout.write(JSON.stringify(result ?? null));
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack));
  process.exit(1);
});
