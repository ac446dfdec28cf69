import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { openServices, type Services } from '../../../src/core/services';

export const WASM_PATH = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');

export function tempHome(label = 'store'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `recollect-${label}-`));
}

/** A real store on a real temp folder, with the real sql.js wasm. */
export async function openTemp(home = tempHome(), now?: () => number): Promise<Services> {
  return openServices({ home, wasmPath: WASM_PATH, ...(now ? { now } : {}) });
}
