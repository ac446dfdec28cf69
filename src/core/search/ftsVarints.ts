/**
 * FTS3/4 varints read one after another from a record (%_docsize, %_stat) or an index node:
 * 7 bits a byte, least significant first, the high bit set on every byte but the last.
 */
export class FtsVarints {
  /** The offset of the next byte to read. */
  at = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /** The next varint, or -1 when the bytes end inside it (or before it). */
  next(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = this.bytes[this.at++];
      if (b === undefined) return -1;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  }
}
