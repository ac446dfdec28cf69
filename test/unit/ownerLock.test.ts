import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'rolldown';
import { describe, expect, it } from 'vitest';
import { OwnerLock } from '../../src/core/owner/ownerLock';
import { tempHome } from './helpers/tempStore';

/** A pid that ran and has ended: the claim a killed owner leaves behind. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('the owner claim', () => {
  it('goes to exactly one of several processes that find the same dead claim at the same instant', async () => {
    const dir = tempHome('owner-claim-race');
    const child = path.join(dir, 'claimChild.cjs');
    await build({ input: path.join(__dirname, 'helpers/claimChild.ts'), platform: 'node', logLevel: 'warn', output: { file: child, format: 'cjs' } });
    const os = await import('node:os');
    for (let round = 0; round < 12; round++) {
      const file = path.join(dir, `owner-${round}.lock`);
      fs.writeFileSync(file, `${deadPid()} ${os.hostname()} mcp 0123456789ab`);
      const startAt = Date.now() + 400;
      const claimants = Array.from({ length: 6 }, () => spawn(process.execPath, [child, file, String(startAt)], { stdio: ['pipe', 'pipe', 'inherit'] }));
      const answers = await Promise.all(
        claimants.map((c) => new Promise<string>((resolve) => c.stdout.once('data', (d: Buffer) => resolve(d.toString('utf8').trim())))),
      );
      const owners = claimants.filter((_, i) => answers[i] === 'owner');
      expect(owners.length, `round ${round}: ${answers.join(' ')}`).toBe(1);
      expect(new OwnerLock(file).holder()?.pid).toBe(owners[0]!.pid);
      for (const c of claimants) c.stdin.end();
      await Promise.all(claimants.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    }
  }, 120_000);
});
