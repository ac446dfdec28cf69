import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOB_GRAMS_FILE, BlobGrams, gramKeys, mayHold, summarise } from '../../../src/core/lcm/blobGrams';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { tempHome } from '../helpers/tempStore';
import { bruteForce, bruteRanked, compiled, rng } from './grepReference';
import { importedFixtures, openLcm } from './lcmFixture';

/**
 * lcm_grep skips a large event's blob when its trigram filter proves a literal absent. The filter
 * may only ever say "absent" truthfully: checked against the texts themselves, on random texts
 * and on the real fixtures' blobs, and end to end against a scan of every text.
 */



describe('blob trigram filters', () => {
  it('never rule out a text that holds the literal, case-sensitive or /i, ASCII or not', () => {
    const next = rng(7);
    const alphabet = 'abcAB CxyzXYZ:/-"é日ſK0129';
    const pick = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    let ruledOut = 0;
    for (let round = 0; round < 3000; round++) {
      const text = pick(5 + Math.floor(next() * 400));
      const start = Math.floor(next() * (text.length - 4));
      const inside = text.slice(start, start + 3 + Math.floor(next() * 6));
      const outside = pick(4 + Math.floor(next() * 5));
      const bits = summarise(Buffer.from(text, 'utf8'));
      for (const literal of [inside, outside]) {
        const escaped = literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
        for (const pattern of [escaped, `/${escaped}/i`]) {
          const p = compiled(pattern);
          const keys = gramKeys(p);
          if (!keys) continue;
          const matches = new RegExp(p.regex.source, p.regex.flags.replace('g', '')).test(text);
          if (!mayHold(bits, keys)) {
            ruledOut++;
            expect(matches, `${pattern} in ${JSON.stringify(text)}`).toBe(false);
          }
        }
      }
    }
    // And the filter does rule out: otherwise it would be worthless.
    expect(ruledOut).toBeGreaterThan(1000);
  });

  it('rule out a text that holds every trigram of a literal but not its 4-grams', () => {
    // "llama" and "collect" hold oll, lla, lam and ama; only "olla" is missing.
    const bits = summarise(Buffer.from('{"model":"llama3"} and then collect the output', 'utf8'));
    const keys = gramKeys(compiled('/OLLAMA/i'))!;
    expect(mayHold(bits, keys)).toBe(false);
    expect(mayHold(summarise(Buffer.from('{"model":"ollama3"} and then collect the output', 'utf8')), keys)).toBe(true);
  });

  it('are not used where the regex folds beyond ASCII or no literal has three bytes', () => {
    // RE2's /i matches ſ for s and K for k.
    expect(gramKeys(compiled('/kubectl/i'))).toBeUndefined();
    expect(gramKeys(compiled('/ollama/iu'))).toHaveLength(1);
    expect(gramKeys(compiled('/café/i'))).toBeUndefined();
    expect(gramKeys(compiled('[0-9]{40}'))).toBeUndefined();
    expect(gramKeys(compiled('ab[0-9]'))).toBeUndefined();
    expect(gramKeys(compiled('café'))).toHaveLength(1);
    expect(gramKeys(compiled('/OLLAMA/i'))?.map((k) => Buffer.from(k).toString('utf8'))).toEqual(['ollama']);
  });

  it('persist for the next process, ignore a record still being written, and heal a damaged file', () => {
    const home = tempHome('grams');
    try {
      const a = new BlobGrams(home);
      const h1 = 'a'.repeat(64);
      const h2 = 'b'.repeat(64);
      a.add(h1, Buffer.from('the quick brown fox'));
      a.add(h2, Buffer.from('jumps over the lazy dog'));
      a.flush();
      const file = fs.readdirSync(home).map((f) => path.join(home, f))[0]!;
      const b = new BlobGrams(home);
      b.refresh();
      expect(Array.from(b.get(h1) ?? [])).toEqual(Array.from(summarise(Buffer.from('the quick brown fox'))));
      expect(Array.from(b.get(h2) ?? [])).toEqual(Array.from(summarise(Buffer.from('jumps over the lazy dog'))));

      // Half a record at the end (another process mid-write): the whole ones are read, it is not.
      const whole = fs.readFileSync(file);
      const half = whole.subarray(0, whole.length - 10);
      fs.writeFileSync(file, half);
      const c = new BlobGrams(home);
      c.refresh();
      expect(c.get(h1)).toBeDefined();
      expect(c.get(h2)).toBeUndefined();
      expect(fs.readFileSync(file).length).toBe(half.length);

      // A crash tore that record and later appends followed it: the file is rewritten with the good records.
      const d = new BlobGrams(home);
      d.add('c'.repeat(64), Buffer.from('a third blob'));
      d.flush();
      const e = new BlobGrams(home);
      e.refresh();
      expect(e.get(h1)).toBeDefined();
      expect(e.get('c'.repeat(64))).toBeUndefined();
      const f = new BlobGrams(home);
      f.refresh();
      expect(Array.from(f.get(h1) ?? [])).toEqual(Array.from(summarise(Buffer.from('the quick brown fox'))));
      f.add('d'.repeat(64), Buffer.from('a fourth blob'));
      f.flush();
      const g = new BlobGrams(home);
      g.refresh();
      expect(Array.from(g.get('d'.repeat(64)) ?? [])).toEqual(Array.from(summarise(Buffer.from('a fourth blob'))));
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
  it('index where the filters are instead of holding them, and test a batch read in file order as each alone', () => {
    const home = tempHome('grams-index');
    try {
      const a = new BlobGrams(home);
      const words = ['ollama', 'serve', 'model', 'router', 'kernel', 'parser', 'vector', 'signal'];
      const hashes: string[] = [];
      const texts: Buffer[] = [];
      for (let i = 0; i < 300; i++) {
        // 20 KB of text a blob (a 4 KB filter), each holding a few of the words.
        const text = Buffer.from(Array.from({ length: 2_000 }, (_, j) => `${words[(i * 7 + j * (i % 5 + 1)) % (i % 3 === 0 ? 3 : words.length)]}${j}`).join(' '));
        const hash = (i.toString(16).padStart(4, '0') + 'e'.repeat(60)).slice(0, 64);
        hashes.push(hash);
        texts.push(text);
        a.add(hash, text);
      }
      a.flush();
      const size = fs.statSync(path.join(home, BLOB_GRAMS_FILE)).size;
      expect(size).toBeGreaterThan(300 * 4096);
      // The index: about 120 bytes a blob, not the 1.2 MB of filters (nor half of it).
      expect(a.heldBytes).toBeLessThanOrEqual(300 * 120);
      const b = new BlobGrams(home);
      b.refresh();
      expect(b.heldBytes).toBeLessThanOrEqual(300 * 120);
      for (const word of ['router', 'ollama', 'nowhere']) {
        const keys = [Buffer.from(word)];
        const absent = new Set<string>();
        const passed = new Set<string>();
        b.test([...hashes].reverse(), keys, absent, passed);
        expect(absent.size + passed.size).toBe(300);
        for (const [i, hash] of hashes.entries()) {
          const bits = b.get(hash);
          expect(Array.from(bits ?? [])).toEqual(Array.from(summarise(texts[i]!)));
          expect(passed.has(hash)).toBe(mayHold(bits!, keys));
          // A filter never rules out a blob that holds the word.
          if (texts[i]!.includes(word)) expect(passed.has(hash)).toBe(true);
        }
        if (word === 'nowhere') expect(passed.size).toBeLessThan(30);
      }
      b.close();
      a.close();
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('lcm_grep with blob filters', () => {
  let s: Services;
  beforeAll(async () => {
    s = await importedFixtures();
  });
  afterAll(() => s.store.close());

  type Grep = { ok: boolean; matches: { id: number; snippet: string }[]; scan: { messages: { blobsRead: number } } };
  const grep = async (pattern: string, sort: 'recency' | 'relevance', svc = s) =>
    (await invokeTool(findTool('lcm_grep')!, { pattern, scope: 'messages', allConversations: true, limit: 200, sort }, svc, { client: 'test' })) as Grep;

  it('reads fewer blobs once their filters exist, and still finds exactly what a scan of every text finds', async () => {
    const distinct = queryRows(s.store.db, 'SELECT count(DISTINCT blob) AS d FROM events WHERE blob IS NOT NULL')[0]!;
    const blobs = Number(distinct.d);
    expect(blobs).toBeGreaterThan(3);
    // A pattern without a usable literal reads every blob, and leaves a filter for each.
    const first = await grep('[0-9]{4}-[0-9]{2}', 'relevance');
    expect(first.scan.messages.blobsRead).toBe(blobs);
    let skipped = 0;
    const cases: [string, RegExp][] = [
      ['ntriesCoun', /ntriesCoun/],
      ['/"UNPROCESSEDENTRIESCOUNT": [0-9]/i', /"UNPROCESSEDENTRIESCOUNT": [0-9]/i],
      ['createdMessages\\[0\\]\\.id', /createdMessages\[0\]\.id/],
      ['npm run dev', /npm run dev/],
      ['localhost:[0-9]+', /localhost:[0-9]+/],
      ['/OLLAMA/i', /OLLAMA/i],
      ['zzqx-not-anywhere', /zzqx-not-anywhere/],
    ];
    for (const [pattern, re] of cases) {
      for (const sort of ['recency', 'relevance'] as const) {
        const r = await grep(pattern, sort);
        expect(r.ok).toBe(true);
        expect(new Set(r.matches.map((m) => m.id)), `${pattern} ${sort}`).toEqual(bruteForce(s, re, 'messages'));
        if (sort === 'relevance') expect(r.matches.map((m) => m.id), pattern).toEqual(bruteRanked(s, re, 'messages').slice(0, 200));
        skipped += blobs - r.scan.messages.blobsRead;
      }
    }
    expect(skipped).toBeGreaterThan(0);
    // The absent literal is ruled out in every blob without one being opened.
    expect((await grep('zzqx-not-anywhere', 'relevance')).scan.messages.blobsRead).toBe(0);
  });

  it('narrow large events by conversation and time exactly as the slow scan does', async () => {
    const conv = queryRows(s.store.db, 'SELECT s.rowid AS n, s.id AS sid FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.blob IS NOT NULL GROUP BY s.id ORDER BY count(*) DESC LIMIT 1')[0]!;
    const rows = queryRows(s.store.db, 'SELECT e.id, e.session_id AS sid, coalesce(e.created_at, x.updated_at, 0) AS at FROM events e JOIN sessions x ON x.id = e.session_id');
    const info = new Map(rows.map((r) => [Number(r.id), { sid: String(r.sid), at: Number(r.at) }]));
    const times = [...new Set(rows.filter((r) => r.sid === conv.sid).map((r) => Number(r.at)))].sort((a, b) => a - b);
    const since = times[Math.floor(times.length / 4)]!;
    const before = times[Math.floor((times.length * 3) / 4)]!;
    const cases: [string, RegExp][] = [['ntriesCoun', /ntriesCoun/], ['"[a-z]+Count": [0-9]+', /"[a-z]+Count": [0-9]+/], ['/OLLAMA/i', /OLLAMA/i], ['[0-9]{4}-[0-9]{2}', /[0-9]{4}-[0-9]{2}/]];
    let large = 0;
    for (const [pattern, re] of cases) {
      const all = bruteForce(s, re, 'messages');
      for (const window of [false, true]) {
        const expected = new Set([...all].filter((id) => {
          const e = info.get(Number(id))!;
          return e.sid === conv.sid && (!window || (e.at >= since && e.at < before));
        }));
        for (const sort of ['recency', 'relevance'] as const) {
          const input = { pattern, scope: 'messages', conversationId: Number(conv.n), limit: 200, sort, ...(window ? { since: new Date(since).toISOString(), before: new Date(before).toISOString() } : {}) };
          const r = (await invokeTool(findTool('lcm_grep')!, input, s, { client: 'test' })) as Grep;
          expect(r.ok, pattern).toBe(true);
          expect(new Set(r.matches.map((m) => m.id)), `${pattern} ${sort} window=${window}`).toEqual(expected);
        }
        large += queryRows(s.store.db, `SELECT count(*) AS n FROM events WHERE blob IS NOT NULL AND id IN (${[...expected].join(',') || '0'})`).map((r) => Number(r.n))[0]!;
      }
    }
    // Large events were among the answers, so their narrowing was exercised.
    expect(large).toBeGreaterThan(0);
  });

  it('a second process reads the filters the first wrote', async () => {
    const home = s.store.home;
    const other = await openLcm({}, home);
    try {
      const r = await grep('zzqx-not-anywhere', 'relevance', other);
      expect(r.ok).toBe(true);
      expect(r.scan.messages.blobsRead).toBe(0);
    } finally {
      other.store.close();
    }
  });
});
