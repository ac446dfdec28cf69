// Writes contributes.languageModelTools (and their activation events) into package.json from the
// tool registry, through the built CLI so the zod schemas are the only source. A unit test
// fails when package.json drifts from the registry; run `npm run gen:manifest` to fix it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--only', 'cli'], { stdio: 'inherit' });
const tools = JSON.parse(execFileSync(process.execPath, [path.join(root, 'dist/cli.js'), 'manifest'], { encoding: 'utf8' }));
const pkgPath = path.join(root, 'package.json');
const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8'));
pkg.contributes.languageModelTools = tools;
const others = (pkg.activationEvents ?? []).filter((e) => !e.startsWith('onLanguageModelTool:'));
pkg.activationEvents = [...others, ...tools.map((t) => `onLanguageModelTool:${t.name}`)];
fs.writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + '\n');
console.log(`package.json: ${tools.length} language-model tools`);
