import { randomBytes } from 'node:crypto';

/** Time-ordered, collision-resistant ids: sortable by creation, unique across processes. */
export function newId(now: number): string {
  return now.toString(36).padStart(9, '0') + randomBytes(5).toString('hex');
}
