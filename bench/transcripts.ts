import * as fs from 'node:fs';
import * as path from 'node:path';
import { walkTranscriptFiles } from '../src/core/history/importer';
import { loadVocabulary } from './corpus';
import { Rng, Zipf } from './rng';

/**
 * A large transcript folder made of copies of the real fixtures. Each copy is its own set of
 * sessions: every UUID in a copy (in file contents and in paths, where Claude Code and Codex
 * keep their session ids) is replaced by a fresh one, consistently across the copy's files, so
 * a sub-agent file still names its parent. Files whose names hold no UUID (VS Code exports,
 * which take their id from the file name) are told apart by their copy folder and a name prefix.
 *
 * Copies after the first are also varied in their words (see `wordVariation`): 1,500 verbatim
 * copies of 684 KB would make a corpus of ~2,000 distinct words whose large outputs all dedupe,
 * which flatters every figure measured on it (store size, index size, grep). `--verbatim-copies`
 * restores the old corpus for comparison.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HAS_UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

export interface ReplicatedTranscripts {
  root: string;
  /** One folder per copy, in order: importing them one by one lets the caller sample memory in between. */
  copyDirs: string[];
  files: number;
  bytes: number;
  copies: number;
  fixtureFiles: number;
  fixtureBytes: number;
}

interface Fixture {
  rel: string;
  text: string;
}

export function readFixtures(fixturesDir: string): Fixture[] {
  return [...walkTranscriptFiles(fixturesDir)].sort().map((file) => ({ rel: path.relative(fixturesDir, file), text: fs.readFileSync(file, 'utf8') }));
}

/** Writes copies of the fixtures under `root` until at least `targetBytes` are written (or `copies` exactly, when given). */
export function replicateTranscripts(fixturesDir: string, root: string, targetBytes: number, rng: Rng, onProgress?: (copies: number, bytes: number) => void, verbatim = false): ReplicatedTranscripts {
  const fixtures = readFixtures(fixturesDir);
  const vary = verbatim ? undefined : wordVariation(fixturesDir, rng);
  const fixtureBytes = fixtures.reduce((a, f) => a + Buffer.byteLength(f.text), 0);
  if (!fixtureBytes) throw new Error(`no transcript fixtures under ${fixturesDir}`);
  const copies = Math.max(1, Math.ceil(targetBytes / fixtureBytes));
  const out: ReplicatedTranscripts = { root, copyDirs: [], files: 0, bytes: 0, copies, fixtureFiles: fixtures.length, fixtureBytes };
  for (let c = 0; c < copies; c++) {
    const dir = path.join(root, `copy-${String(c).padStart(4, '0')}`);
    const fresh = new Map<string, string>();
    const varyText = c > 0 && vary ? vary() : (t: string) => t;
    const swap = (s: string) =>
      s.replace(UUID, (u) => {
        const key = u.toLowerCase();
        let v = fresh.get(key);
        if (!v) {
          v = uuidV4(rng);
          fresh.set(key, v);
        }
        return u === key ? v : v.toUpperCase();
      });
    for (const f of fixtures) {
      const rel = swap(f.rel);
      const base = path.basename(rel);
      const named = HAS_UUID.test(base) ? rel : path.join(path.dirname(rel), `c${c}-${base}`);
      const file = path.join(dir, named);
      const text = swap(varyText(f.text));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      out.files++;
      out.bytes += Buffer.byteLength(text);
    }
    out.copyDirs.push(dir);
    if (onProgress && (c + 1) % 25 === 0) onProgress(c + 1, out.bytes);
  }
  return out;
}

/** A JSON string literal (keys included; the replacer tells them apart by the colon after them). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"(\s*:)?/g;
/** A whole word of letters: not right after a backslash (an escape like \n or \u00e9) or inside a longer alphanumeric run. */
const PLAIN_WORD = /(?<![\\A-Za-z0-9_])[A-Za-z]{3,}(?![A-Za-z0-9_])/g;
const NESTED_KEY_END = /^\\"\s*:/;
/** Share of a copy's distinct words that it spells differently from the fixtures. */
const VARIED_SHARE = 0.5;

/**
 * Returns a factory of per-copy text rewriters. Each copy replaces about half of the distinct
 * words of its string values (never keys, short values, UUIDs, or the keys of JSON carried inside a string)
 * with words drawn from the bench vocabulary by a Zipf law, consistently within the copy. The
 * structure every parser reads is untouched, so each copy imports to the same sessions, runs and
 * events as the fixtures, while the text, the large outputs and the index vocabulary grow like a
 * real archive's instead of repeating.
 */
function wordVariation(fixturesDir: string, rng: Rng): () => (text: string) => string {
  const vocab = loadVocabulary(fixturesDir, new Rng(rng.int(1, 2 ** 30)), 200_000);
  const zipf = new Zipf(vocab.words.length, 1.07);
  const tail = vocab.words.length - vocab.realWords;
  // Half the replacements come from the identifier-like tail, so the vocabulary keeps growing
  // with the archive (as names, paths and identifiers do) instead of reshuffling the same words.
  const replacement = () => (rng.chance(0.5) ? vocab.words[vocab.realWords + Math.floor(rng.next() * tail)] : vocab.words[zipf.sample(rng)]);
  return () => {
    const chosen = new Map<string, string>();
    const wordFor = (w: string) => {
      let v = chosen.get(w);
      if (v === undefined) {
        v = rng.chance(VARIED_SHARE) ? (replacement() ?? w) : w;
        chosen.set(w, v);
      }
      return v;
    };
    // JSON carried inside a string keeps its keys: a word right before an escaped quote and a colon.
    const varyPart = (part: string) => part.replace(PLAIN_WORD, (w: string, at: number) => (NESTED_KEY_END.test(part.slice(at + w.length, at + w.length + 8)) ? w : wordFor(w)));
    const varyLiteral = (literal: string) => {
      if (literal.length < 42) return literal;
      // UUIDs stay whole: the caller swaps them per copy afterwards.
      let out = '';
      let last = 0;
      for (const m of literal.matchAll(UUID)) {
        out += varyPart(literal.slice(last, m.index)) + m[0];
        last = m.index + m[0].length;
      }
      return out + varyPart(literal.slice(last));
    };
    // Line by line: a JSON string never holds a raw newline, so a broken line (the fixtures have
    // some on purpose) cannot shift which quotes pair up on the lines after it.
    const varyLine = (line: string) => line.replace(JSON_STRING, (literal: string, key: string | undefined) => (key === undefined ? varyLiteral(literal) : literal));
    return (text) => text.split('\n').map(varyLine).join('\n');
  };
}

function uuidV4(rng: Rng): string {
  const h = rng.hex(32).split('');
  h[12] = '4';
  h[16] = '89ab'[parseInt(h[16] as string, 16) & 3] as string;
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** Total size of the files under a folder (recursively), and how many there are. */
export function folderSize(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  if (!fs.existsSync(dir)) return { bytes, files };
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop() as string;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        bytes += fs.statSync(p).size;
        files++;
      }
    }
  }
  return { bytes, files };
}
