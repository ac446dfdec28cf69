import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSqlJs, setWasmCompilation } from '../../src/core/store/sqlite';

describe('setWasmCompilation', () => {
  // The flags fix a module's code once it is compiled: set afterwards they would silently do nothing.
  it('refuses once sql.js is loaded in the process', async () => {
    await loadSqlJs(path.join(__dirname, '../../node_modules/sql.js/dist/sql-wasm.wasm'));
    expect(() => setWasmCompilation('one-shot')).toThrow(/before sql.js is loaded/);
    expect(() => setWasmCompilation('server')).toThrow(/before sql.js is loaded/);
  });
});
