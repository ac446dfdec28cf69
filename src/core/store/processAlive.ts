/**
 * Whether a process with this pid exists on this machine. Anything but "no such process" counts
 * as alive (EPERM: it exists, owned by someone else), so a file a live process may still own
 * is never taken over or removed.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
