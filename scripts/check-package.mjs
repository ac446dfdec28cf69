// Packages the extension and checks the .vsix: the wasm and the bundles are in, sources and tests are out.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const vsix = path.join(root, 'recollect.vsix');
execFileSync('npx', ['vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--out', vsix], { cwd: root, stdio: 'inherit' });
const listing = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean);
// The bundled embedding model: its worker and every file the build copied from the model's package.
const modelFiles = fs.readdirSync(path.join(root, 'dist/use-lite')).map((f) => `extension/dist/use-lite/${f}`);
if (!modelFiles.some((f) => f.endsWith('/model.json')) || !modelFiles.some((f) => f.endsWith('/vocab.json')) || !modelFiles.some((f) => f.includes('group1-shard'))) {
  console.error(`dist/use-lite lacks the model's files: ${JSON.stringify(modelFiles)}`);
  process.exit(1);
}
const must = [
  'extension/package.json', 'extension/dist/extension.js', 'extension/dist/cli.js', 'extension/dist/cliMain.js', 'extension/dist/server.js', 'extension/dist/compactWorker.js', 'extension/dist/readWorker.js', 'extension/dist/sql-wasm.wasm', 'extension/dist/re2.wasm',
  'extension/dist/embedWorker.js', ...modelFiles,
];
const missing = must.filter((f) => !listing.includes(f));
const leaked = listing.filter((f) => /^extension\/(src|test|bench|scripts|node_modules)\//.test(f) || f.endsWith('.map'));
if (missing.length || leaked.length) {
  console.error(`vsix problems: missing ${JSON.stringify(missing)}, should not ship ${JSON.stringify(leaked.slice(0, 20))}`);
  process.exit(1);
}
console.log(`recollect.vsix: ${listing.length} files, ${(fs.statSync(vsix).size / 1048576).toFixed(1)} MB, wasm and the embedding model included, no sources or tests`);

// And it installs into real VS Code (code-server's own extension installer).
const codeServer = execFileSync('bash', [path.join(root, 'scripts/e2e-setup.sh')], { encoding: 'utf8' }).trim();
const extDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-vsix-'));
try {
  execFileSync(codeServer, ['--extensions-dir', extDir, '--install-extension', vsix], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, XDG_CONFIG_HOME: extDir, XDG_DATA_HOME: extDir },
  });
  const installed = fs.readdirSync(extDir).find((d) => d.startsWith('recollect.recollect-'));
  if (!installed || !fs.existsSync(path.join(extDir, installed, 'dist', 'sql-wasm.wasm')) || !fs.existsSync(path.join(extDir, installed, 'dist', 'use-lite', 'model.json'))) {
    console.error(`the .vsix did not install into code-server: ${JSON.stringify(fs.readdirSync(extDir))}`);
    process.exit(1);
  }
  console.log(`recollect.vsix installs into VS Code as ${installed}`);
} finally {
  fs.rmSync(extDir, { recursive: true, force: true });
}
