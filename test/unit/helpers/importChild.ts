/**
 * A separate process that imports transcripts under a memory budget, one folder at a time:
 * `node importChild.cjs <home> <wasm> <budgetMb> <now> <folder>...`. Prints `imported <folder>`
 * once that folder's import has resolved (its lines are on disk), then, after the store closed
 * (its checkpoint included), `done <json>` with the process's peak RSS (VmHWM) and memory_status's
 * memory. Bundled by the test that runs it.
 */
import * as fs from 'node:fs';
import { openServices } from '../../../src/core/services';

function peakRss(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function main(): Promise<void> {
  const [home, wasmPath, budget, now, ...folders] = process.argv.slice(2);
  if (!home || !wasmPath || !budget || !now) throw new Error('usage: importChild <home> <wasm> <budgetMb> <now> <folder>...');
  const s = await openServices({ home, wasmPath, memoryBudgetMb: Number(budget), now: () => Number(now), autoCompact: false });
  for (const folder of folders) {
    await s.importer.importPaths([folder]);
    process.stdout.write(`imported ${folder}\n`);
  }
  const memory = s.memory.status().memory;
  s.store.close();
  process.stdout.write(`done ${JSON.stringify({ peak: peakRss(), memory })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack));
  process.exit(1);
});
