import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { openServices, type Services } from '../../../src/core/services';

export const WASM_PATH = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');

const made: string[] = [];

/** A fresh temp folder, removed after the test file by removeTempHomes (test/unit/removeTempHomes.ts). */
export function tempHome(label = 'store'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `recollect-${label}-`));
  made.push(dir);
  return dir;
}

export function removeTempHomes(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** A real store on a real temp folder, with the real sql.js wasm. */
export async function openTemp(home = tempHome(), now?: () => number): Promise<Services> {
  return openServices({ home, wasmPath: WASM_PATH, ...(now ? { now } : {}) });
}
