/**
 * The errno a damaged chunk reports: Emscripten's EBADMSG (WASI numbering). SQLite's unix layer
 * reads EIO as "the file system is corrupt" (SQLITE_IOERR_CORRUPTFS), which queries then report
 * as "database disk image is malformed", a claim about the database; any other errno gives
 * SQLITE_IOERR_READ, "disk I/O error", which is what happened. Measured in pagedSnapshot.test.ts.
 */
const DAMAGED_READ = 9;

/**
 * The error Emscripten's system-call layer recognizes (by `name`) and turns into an errno for
 * SQLite instead of letting it unwind through the wasm. sql.js 1.16's minified build reads the
 * number from `Sa`; `errno` is the unminified name. A test checks that a damaged chunk really
 * surfaces as "disk I/O error".
 */
export function ioError(message: string): Error {
  return Object.assign(new Error(message), { name: 'ErrnoError', errno: DAMAGED_READ, Sa: DAMAGED_READ });
}
