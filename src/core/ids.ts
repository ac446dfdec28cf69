import { randomBytes } from 'node:crypto';

/** Time-ordered, collision-resistant ids: sortable by creation, unique across processes. */
export function newId(now: number): string {
  return now.toString(36).padStart(9, '0') + randomBytes(5).toString('hex');
}

/**
 * A new id at `now` that sorts after `previous` when both fall in the same millisecond: where
 * values are ordered by (time, id) on every machine (a fact's value, memorySchema), the writer's
 * newer value must win over the one it replaced, whatever the random part drew.
 */
export function newIdAfter(now: number, previous: string): string {
  const id = newId(now);
  if (id > previous) return id;
  const prefix = previous.slice(0, 9);
  const tail = /^[0-9a-f]{10}$/.test(previous.slice(9)) ? BigInt(`0x${previous.slice(9)}`) + 1n + BigInt(randomBytes(2).readUInt16BE()) : undefined;
  if (tail !== undefined && tail < 1n << 40n) return prefix + tail.toString(16).padStart(10, '0');
  return previous + randomBytes(1).toString('hex');
}
