import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/** Process-level tests run the real bundle (dist/cli.js), so build it once before any test. */
export default function setup(): void {
  const root = path.resolve(__dirname, '../..');
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--only', 'cli'], { stdio: 'inherit', cwd: root });
}
