/**
 * A process whose only work is an awaited compaction: `node compactChild.cjs <home> <wasm> <worker>`
 * prints the result once it is done. Nothing else keeps it alive, so it shows that an awaited
 * `store.compact()` holds its process until it answers. Bundled by the test that runs it.
 */
import { openServices } from '../../../src/core/services';

async function main(): Promise<void> {
  const [home, wasmPath, compactWorkerPath] = process.argv.slice(2);
  if (!home || !wasmPath || !compactWorkerPath) throw new Error('usage: compactChild <home> <wasm> <worker>');
  const s = await openServices({ home, wasmPath, compactWorkerPath, readAhead: false, autoCompact: false });
  const result = await s.store.compact();
  s.store.close();
  process.stdout.write(JSON.stringify({ ok: result.ok }));
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack));
  process.exit(1);
});
