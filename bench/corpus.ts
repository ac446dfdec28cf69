import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng, Zipf } from './rng';

/**
 * A realistic, reproducible message corpus: the vocabulary and runs of real text come from
 * the recorded agent transcripts in the fixtures; word choice follows a Zipf law over that
 * vocabulary (ranked by real frequency) plus a long tail of identifier-like words, so queries
 * can mix terms found in most messages with terms found in a handful.
 */

const TOKEN = /[\p{L}\p{N}]+/gu; // what unicode61 keeps as token characters (roughly)

export interface Vocabulary {
  /** Surface forms ranked by frequency, most frequent first; the tail is synthetic identifiers. */
  words: string[];
  realWords: number;
  /** Real transcript strings as whitespace-split runs, for verbatim windows. */
  passages: string[][];
  /** Adjacent word pairs that recur in the transcripts (for phrase queries). */
  bigrams: string[];
  fixtureFiles: number;
  fixtureChars: number;
}

export function defaultFixturesDir(): string {
  const fromEnv = process.env.RECOLLECT_BENCH_FIXTURES;
  if (fromEnv) return fromEnv;
  // dist/bench.js → <repo>/dist → <repo>/.. /shared/fixtures/transcripts
  const candidates = [
    path.resolve(__dirname, '..', '..', 'shared', 'fixtures', 'transcripts'),
    path.resolve(__dirname, '..', 'test', 'fixtures', 'transcripts'),
    '/work/shared/fixtures/transcripts',
  ];
  return candidates.find((c) => fs.existsSync(c)) ?? (candidates[0] as string);
}

export function loadVocabulary(dir: string, rng: Rng, targetSize = 60_000): Vocabulary {
  const files = listFiles(dir).filter((f) => /\.(jsonl|json)$/.test(f)).sort();
  if (!files.length) throw new Error(`no transcript fixtures under ${dir} (set RECOLLECT_BENCH_FIXTURES)`);
  const strings: string[] = [];
  let chars = 0;
  for (const file of files) {
    const raw = fs.readFileSync(file, 'utf8');
    const docs = file.endsWith('.jsonl') ? raw.split('\n').filter((l) => l.trim()) : [raw];
    for (const doc of docs) {
      let value: unknown;
      try {
        value = JSON.parse(doc);
      } catch {
        continue;
      }
      collectStrings(value, strings);
    }
  }
  const counts = new Map<string, number>();
  const surface = new Map<string, string>();
  const pairCounts = new Map<string, number>();
  const passages: string[][] = [];
  for (const s of strings) {
    chars += s.length;
    const run = s.split(/\s+/).filter((w) => w && w.length <= 40);
    if (run.length >= 6) passages.push(run);
    let prev = '';
    for (const m of s.matchAll(TOKEN)) {
      const w = m[0];
      if (w.length > 30) {
        prev = '';
        continue;
      }
      const key = w.toLowerCase();
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (!surface.has(key) || w === key) surface.set(key, w);
      if (prev && prev.length >= 4 && key.length >= 4 && !/\d/.test(prev + key)) {
        const pair = `${prev} ${key}`;
        pairCounts.set(pair, (pairCounts.get(pair) ?? 0) + 1);
      }
      prev = key;
    }
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => surface.get(k) as string);
  const realWords = ranked.length;
  // The long tail: identifier-like words (camelCase pairs, word+digits) that a real memory is full of.
  const known = new Set(ranked.map((w) => w.toLowerCase()));
  const base = ranked.filter((w) => /^[a-z]{3,10}$/.test(w)).slice(0, 3000);
  const words = [...ranked];
  while (words.length < targetSize) {
    const a = rng.pick(base);
    const b = rng.pick(base);
    const kind = rng.next();
    const w = kind < 0.6 ? a + b[0]!.toUpperCase() + b.slice(1) : kind < 0.85 ? `${a}${rng.int(2, 999)}` : `${a}${b.slice(0, 4)}`;
    const key = w.toLowerCase();
    if (known.has(key)) continue;
    known.add(key);
    words.push(w);
  }
  const bigrams = [...pairCounts.entries()].filter(([, n]) => n >= 3).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([p]) => p);
  return { words, realWords, passages, bigrams, fixtureFiles: files.length, fixtureChars: chars };
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    const t = value.trimStart();
    // Tool outputs are often JSON inside a string: read through it rather than index its escapes.
    if ((t.startsWith('{') || t.startsWith('[')) && t.length < 1_000_000) {
      try {
        collectStrings(JSON.parse(t), out);
        return;
      } catch {
        // not JSON after all
      }
    }
    value = value.replace(/\\[nrt]/g, ' ');
  }
  if (typeof value === 'string') {
    if (value.length >= 12 && value.length <= 50_000 && /\s\S+\s/.test(value)) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) collectStrings(v, out);
  }
}

export interface MessageGenerator {
  /** One message of 20–400 words (log-normal, median ~65), at most 4,000 characters. */
  next(): string;
}

export function messageGenerator(vocab: Vocabulary, rng: Rng, zipfExponent = 1.07): MessageGenerator {
  const zipf = new Zipf(vocab.words.length, zipfExponent);
  const words = vocab.words;
  const sentence = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) {
      const w = words[zipf.sample(rng)] as string;
      s += i === 0 ? w[0]!.toUpperCase() + w.slice(1) : ` ${w}`;
      if (i > 0 && i < n - 1 && rng.chance(0.06)) s += ',';
    }
    return s + (rng.chance(0.1) ? '?' : '.');
  };
  return {
    next(): string {
      const target = Math.max(20, Math.min(400, Math.round(Math.exp(Math.log(65) + 0.75 * rng.normal()))));
      const parts: string[] = [];
      let count = 0;
      while (count < target) {
        const left = target - count;
        if (rng.chance(0.3)) {
          const p = rng.pick(vocab.passages);
          const len = Math.min(left, p.length, rng.int(5, 30));
          const start = rng.int(0, p.length - len);
          parts.push(p.slice(start, start + len).join(' '));
          count += len;
        } else {
          const len = Math.min(left, rng.int(5, 18));
          parts.push(sentence(len));
          count += len;
        }
      }
      let text = parts.join(rng.chance(0.2) ? '\n' : ' ');
      if (text.length > 4000) text = text.slice(0, text.lastIndexOf(' ', 4000));
      return text;
    },
  };
}

/** Document frequency of each lower-cased token over the given texts. */
export function documentFrequencies(texts: readonly string[]): Map<string, number> {
  const df = new Map<string, number>();
  const seen = new Set<string>();
  for (const t of texts) {
    seen.clear();
    for (const m of t.matchAll(TOKEN)) seen.add(m[0].toLowerCase());
    for (const w of seen) df.set(w, (df.get(w) ?? 0) + 1);
  }
  return df;
}

export interface BenchQuery {
  cls: string;
  text: string;
}

export const QUERY_CLASSES = ['1w common', '1w medium', '1w rare', '2w common', '2-3w mixed', 'phrase/prefix'] as const;

/**
 * The fixed query list (30), chosen deterministically from the corpus by document frequency:
 * common ≥ 15% of messages, medium 0.5–3%, rare ≤ 0.1% (but ≥ 5 messages).
 */
export function chooseQueries(df: Map<string, number>, docs: number, vocab: Vocabulary, rng: Rng): BenchQuery[] {
  const entries = [...df.entries()].filter(([w]) => w.length >= 4 && !/^\d+$/.test(w)).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const band = (lo: number, hi: number) => entries.filter(([, n]) => n >= lo && n <= hi).map(([w]) => w);
  const common = band(Math.ceil(docs * 0.15), docs);
  const medium = band(Math.ceil(docs * 0.005), Math.floor(docs * 0.03));
  const rare = band(5, Math.max(5, Math.floor(docs * 0.001)));
  const take = (from: string[], n: number, used: Set<string>): string[] => {
    const out: string[] = [];
    let guard = 0;
    while (out.length < n && guard++ < 10_000) {
      const w = rng.pick(from);
      if (used.has(w)) continue;
      used.add(w);
      out.push(w);
    }
    return out;
  };
  const used = new Set<string>();
  const q: BenchQuery[] = [];
  for (const w of take(common, 5, used)) q.push({ cls: '1w common', text: w });
  for (const w of take(medium, 5, used)) q.push({ cls: '1w medium', text: w });
  for (const w of take(rare, 5, used)) q.push({ cls: '1w rare', text: w });
  for (let i = 0; i < 5; i++) q.push({ cls: '2w common', text: take(common, 2, used).join(' ') });
  q.push({ cls: '2-3w mixed', text: [...take(common, 1, used), ...take(medium, 1, used)].join(' ') });
  q.push({ cls: '2-3w mixed', text: [...take(common, 1, used), ...take(rare, 1, used)].join(' ') });
  q.push({ cls: '2-3w mixed', text: [...take(medium, 2, used)].join(' ') });
  q.push({ cls: '2-3w mixed', text: [...take(common, 2, used), ...take(medium, 1, used)].join(' ') });
  q.push({ cls: '2-3w mixed', text: [...take(common, 1, used), ...take(medium, 1, used), ...take(rare, 1, used)].join(' ') });
  const phrases = vocab.bigrams.filter((b) => b.split(' ').every((w) => (df.get(w) ?? 0) >= docs * 0.005));
  q.push({ cls: 'phrase/prefix', text: `"${phrases[0] ?? 'unit tests'}"` });
  q.push({ cls: 'phrase/prefix', text: `"${phrases[Math.min(phrases.length - 1, 7)] ?? 'code review'}"` });
  for (const w of take(medium.filter((x) => x.length >= 6 && /^[a-z]+$/.test(x)), 3, used)) q.push({ cls: 'phrase/prefix', text: `${w.slice(0, 5)}*` });
  return q;
}
