import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/** Process-level tests run the real bundles (dist/cli.js, dist/server.js), so build them once before any test. */
export default function setup(): void {
  const root = path.resolve(__dirname, '../..');
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--only', 'cli,server'], { stdio: 'inherit', cwd: root });
}
