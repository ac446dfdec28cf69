/**
 * Splits a note into the pieces the keyword (and embedding) index holds. Lossless: the
 * chunks are consecutive slices, so joining them gives back the file byte for byte — which is
 * what lets a retired note be restored from the store exactly. Chunks break at headings and
 * blank lines where they can, so a hit shows a paragraph rather than half of two.
 */
export interface Chunk {
  text: string;
  /** 1-based line the chunk starts on, for citations. */
  line: number;
}

/** About 300 tokens of English: small enough for get_context to fit several, big enough to keep a paragraph whole. */
export const CHUNK_TARGET = 1200;
/** A single paragraph longer than this is split at line, then word, boundaries. */
const CHUNK_MAX = 2000;
/** A heading starts a new chunk once the current one has this much. */
const HEADING_BREAK = 300;

export function chunkNote(content: string): Chunk[] {
  if (content === '') return [];
  const pieces = paragraphs(content).flatMap((p) => (p.length > CHUNK_MAX ? splitLong(p) : [p]));
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    const heading = /^#{1,6}\s/.test(piece);
    const tooBig = current.length + piece.length > CHUNK_TARGET;
    if (current && (tooBig || (heading && current.length >= HEADING_BREAK))) {
      chunks.push(current);
      current = '';
    }
    current += piece;
  }
  if (current) chunks.push(current);
  let line = 1;
  return chunks.map((text) => {
    const chunk = { text, line };
    line += countNewlines(text);
    return chunk;
  });
}

/** Paragraphs with the blank lines after them, so the pieces concatenate to the input. */
function paragraphs(content: string): string[] {
  const out: string[] = [];
  const re = /\n[ \t]*\r?\n(?:[ \t]*\r?\n)*/g;
  let start = 0;
  for (let m = re.exec(content); m; m = re.exec(content)) {
    const end = m.index + m[0].length;
    out.push(content.slice(start, end));
    start = end;
  }
  if (start < content.length) out.push(content.slice(start));
  return out;
}

function splitLong(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > CHUNK_MAX) {
    let cut = rest.lastIndexOf('\n', CHUNK_TARGET);
    if (cut < CHUNK_TARGET / 2) cut = rest.lastIndexOf(' ', CHUNK_TARGET);
    if (cut < CHUNK_TARGET / 2) cut = CHUNK_TARGET;
    // Never split a surrogate pair: a chunk must stay valid Unicode on its own.
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut++;
    out.push(rest.slice(0, cut + (rest[cut] === '\n' || rest[cut] === ' ' ? 1 : 0)));
    rest = rest.slice(out[out.length - 1]!.length);
  }
  if (rest) out.push(rest);
  return out;
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
