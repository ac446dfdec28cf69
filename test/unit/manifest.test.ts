import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { languageModelToolsManifest } from '../../src/core/tools/jsonSchema';
import { TOOLS } from '../../src/core/tools/registry';

const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8'));

describe('package.json agrees with the tool registry', () => {
  it('contributes.languageModelTools is exactly what the registry generates (run `npm run gen:manifest` on drift)', () => {
    expect(pkg.contributes.languageModelTools).toEqual(JSON.parse(JSON.stringify(languageModelToolsManifest(TOOLS))));
  });

  it('every tool has an activation event', () => {
    for (const t of TOOLS) expect(pkg.activationEvents).toContain(`onLanguageModelTool:${t.name}`);
  });

  it('the .vscodeignore allowlist ships the wasm and no sources', () => {
    const ignore = fs.readFileSync(path.resolve(__dirname, '../../.vscodeignore'), 'utf8');
    expect(ignore).toMatch(/^\*\*$/m);
    expect(ignore).toContain('!dist/sql-wasm.wasm');
  });

  it('the .vsix ships every worker bundle a store starts: compaction, embedding, read-ahead', () => {
    const ignore = fs.readFileSync(path.resolve(__dirname, '../../.vscodeignore'), 'utf8');
    const build = fs.readFileSync(path.resolve(__dirname, '../../scripts/build.mjs'), 'utf8');
    const check = fs.readFileSync(path.resolve(__dirname, '../../scripts/check-package.mjs'), 'utf8');
    for (const bundle of ['compactWorker.js', 'embedWorker.js', 'readWorker.js']) {
      expect(build).toContain(`out: '${bundle}'`);
      expect(ignore).toContain(`!dist/${bundle}`);
      expect(check).toContain(`'extension/dist/${bundle}'`);
    }
  });
});
