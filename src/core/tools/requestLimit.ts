/**
 * The largest request, as JSON bytes, the MCP server reads: one stdio line or one HTTP body. A
 * larger one is refused with its measured size and this limit, and the connection goes on.
 * Tools that take long text (write_result's content) state their own limit below it, since JSON
 * escaping makes the request longer than the text.
 */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** "10 MiB", "512 KiB": a byte count as a person reads it. */
export function binarySize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** The refusal of a request over MAX_REQUEST_BYTES, with the measured size. */
export function requestTooLarge(bytes: number, limit = MAX_REQUEST_BYTES): string {
  return `the request is ${bytes.toLocaleString('en-US')} bytes (${binarySize(bytes)}) of JSON, over the ${limit.toLocaleString('en-US')}-byte (${binarySize(limit)}) limit of one request; nothing was read or done. Send less: split long content over several calls`;
}
