import type { Database, SqlJsStatic } from 'sql.js';

/**
 * Opens `bytes` in sql.js without the copy its constructor makes. sql.js writes the bytes into
 * its in-memory file system, which keeps its own `bytes.slice()` of a first write; at 224 MB
 * that copy (fresh memory, every page faulted in) took ~140 ms of a cold open, versus ~8 ms for
 * the rest of the constructor. The caller hands the bytes over and must not touch them again.
 *
 * sql.js is given a throwaway view whose whole-range `slice` answers with a second, untouched
 * view of the same memory, which the file system then keeps, so the array sql.js reads pages
 * from is an ordinary one (no own properties). A partial slice (none today) is a real copy;
 * when sql.js does not call slice at all, nothing changes but the speed. Bytes
 * that share their memory with something else (a view into a larger buffer, e.g. Node's
 * small-buffer pool) are copied as before.
 */
export function adoptDatabase(SQL: SqlJsStatic, bytes: Uint8Array): Database {
  if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength) return new SQL.Database(bytes);
  const kept = new Uint8Array(bytes.buffer, 0, bytes.byteLength);
  const carrier = new Uint8Array(bytes.buffer, 0, bytes.byteLength);
  const whole = bytes.byteLength;
  Object.defineProperty(carrier, 'slice', {
    value(start?: number, end?: number): Uint8Array {
      if ((start ?? 0) === 0 && (end ?? whole) === whole) return kept;
      return Uint8Array.prototype.slice.call(carrier, start, end);
    },
  });
  return new SQL.Database(carrier);
}
