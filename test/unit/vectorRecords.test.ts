import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VectorRecords } from '../../src/core/memory/semantic/vectorRecords';

const PER = 40;
const COUNT = 3_000;

function record(slot: number, version = 0): Uint8Array {
  return Uint8Array.from({ length: PER }, (_, i) => (slot * 31 + i * 7 + version) & 0xff);
}

/** Records 0..COUNT-1 written in runs of varying length, some written twice (the later wins). */
function fill(r: VectorRecords): void {
  for (let from = 0; from < COUNT; ) {
    const n = Math.min(COUNT - from, 1 + (from % 97));
    const run = new Uint8Array(n * PER);
    for (let i = 0; i < n; i++) run.set(record(from + i), i * PER);
    r.write(from, run);
    from += n;
  }
  for (let slot = 5; slot < COUNT; slot += 401) r.write(slot, record(slot, 1));
}

function expected(slot: number): Uint8Array {
  return record(slot, (slot - 5) % 401 === 0 && slot >= 5 ? 1 : 0);
}

const tmpdir = process.env.TMPDIR;
afterEach(() => {
  if (tmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpdir;
});

describe('vector records', () => {
  for (const where of ['a scratch file', 'memory, where no file can be written'] as const) {
    it(`read back exactly what was written, near and far slots alike, from ${where}`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vector-records-'));
      const nowhere = path.join(dir, 'missing', 'folder');
      if (where !== 'a scratch file') process.env.TMPDIR = nowhere;
      const r = new VectorRecords(PER, [where === 'a scratch file' ? dir : nowhere], `vectors.tmp-${process.pid}-9test`);
      try {
        fill(r);
        if (where === 'a scratch file') {
          expect(r.path).toBe(path.join(dir, `vectors.tmp-${process.pid}-9test`));
          expect(r.heldBytes).toBe(0);
        } else {
          expect(r.path).toBeUndefined();
          expect(r.heldBytes).toBeGreaterThanOrEqual(COUNT * PER);
        }
        // Dense runs, isolated slots and gaps around the span limit, ascending as a ranking passes them.
        const slots = [0, 1, 2, 3, 50, 51, 58, 200, 201, 1000, 1101, 1102, 2047, 2048, 2999];
        for (let s = 400; s < 2900; s += 37) slots.push(s);
        const wanted = Uint32Array.from([...new Set(slots)].sort((a, b) => a - b));
        const got = r.read(wanted);
        expect(got.byteLength).toBe(wanted.length * PER);
        wanted.forEach((slot, j) => expect(Array.from(got.subarray(j * PER, (j + 1) * PER))).toEqual(Array.from(expected(slot))));
        const all = r.read(Uint32Array.from({ length: COUNT }, (_, i) => i));
        for (let slot = 0; slot < COUNT; slot++) expect(all.subarray(slot * PER, (slot + 1) * PER)).toEqual(expected(slot));
        r.reset();
        r.write(0, record(7));
        expect(r.read(Uint32Array.of(0))).toEqual(record(7));
      } finally {
        r.close();
      }
      expect(fs.readdirSync(dir)).toEqual([]);
    });
  }
});
