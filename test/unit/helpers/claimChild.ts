import { OwnerLock } from '../../../src/core/owner/ownerLock';

/**
 * One claimant of a store home for ownerLock.test.ts: waits for the start instant, tries to
 * claim (removing a dead claim on the way, as a client whose owner was killed does), prints
 * whether it holds the claim, and stays alive (so its claim stays live) until stdin closes.
 */
const [file, startAt] = [process.argv[2]!, Number(process.argv[3])];
while (Date.now() < startAt) {
  // spin: every claimant starts within the same millisecond or so
}
const lock = new OwnerLock(file);
let claimed = false;
// As storeLink's election does: try again while no live process holds the claim.
for (let i = 0; i < 50 && !claimed; i++) {
  claimed = lock.tryClaim('mcp');
  if (!claimed && lock.holder()?.pid !== undefined && !lock.removeIfDead()) break;
}
process.stdout.write(`${claimed && lock.held() ? 'owner' : 'not'}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
