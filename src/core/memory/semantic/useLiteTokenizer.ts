/**
 * The bundled model's tokenizer: the highest-scoring split of a text into the vocabulary's pieces
 * (a unigram SentencePiece model, found by dynamic programming over the text's code points).
 * It gives the ids that @energetic-ai/embeddings' tokenizer gives, the one the model shipped with,
 * so vectors stored by either are the same (a test compares the two on real transcript text);
 * it is written here so that the worker needs nothing of TensorFlow.js.
 */

/** The first ids are reserved (unknown, start, end, three spare): never a piece of a text. */
const RESERVED = 6;
/** SentencePiece's word boundary: a space, and the start of the text. */
const BOUNDARY = '\u2581';
/** A code point no piece begins with becomes this id, and a run of them one such id. */
const UNKNOWN = 0;

interface TrieNode {
  next: Map<string, TrieNode>;
  /** The piece that ends here: its id, or -1. */
  id: number;
}

export class UseLiteTokenizer {
  private readonly root: TrieNode = { next: new Map(), id: -1 };
  /** Each id's piece length in UTF-16 units, as the shipped tokenizer walks back by it. */
  private readonly lengths: number[];
  private readonly scores: number[];

  constructor(vocabulary: readonly (readonly [string, number])[]) {
    this.lengths = vocabulary.map(([piece]) => piece.length);
    this.scores = vocabulary.map(([, score]) => score);
    for (let id = RESERVED; id < vocabulary.length; id++) {
      let node = this.root;
      for (const ch of (vocabulary[id] as readonly [string, number])[0]) {
        let child = node.next.get(ch);
        if (!child) node.next.set(ch, (child = { next: new Map(), id: -1 }));
        node = child;
      }
      node.id = id;
    }
  }

  encode(text: string): number[] {
    const normal = text.normalize('NFKC');
    if (!normal.length) return [];
    const symbols = Array.from(BOUNDARY + normal.replace(/ /g, BOUNDARY));
    const n = symbols.length;
    // best[e]: the best score of a split of the first e symbols (0 also means "none yet", as in
    // the shipped tokenizer, whose ties and zero scores this follows); word[e]: its last piece.
    const best = new Float64Array(n + 1);
    const word = new Int32Array(n + 1);
    // Pieces grouped by where they end, in the order of their start (the loop below adds them so),
    // as the shipped tokenizer visits them: its ties (>=) go to the last visited.
    const ending: { start: number; id: number; length: number }[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) {
      let node = this.root.next.get(symbols[i] as string);
      let found = false;
      for (let j = i; j < n && node; j++) {
        if (node.id >= 0) {
          ending[j + 1]?.push({ start: i, id: node.id, length: j + 1 - i });
          found = true;
        }
        node = node.next.get(symbols[j + 1] as string);
      }
      if (!found) ending[i + 1]?.push({ start: i, id: UNKNOWN, length: 1 });
    }
    for (let e = 0; e <= n; e++) {
      for (const p of ending[e] as { start: number; id: number; length: number }[]) {
        const score = (p.id === UNKNOWN ? 0 : (this.scores[p.id] as number)) + (best[e - p.length] as number);
        if (best[e] === 0 || score >= (best[e] as number)) {
          best[e] = score;
          word[e] = p.id;
        }
      }
    }
    const ids: number[] = [];
    for (let at = n; at > 0; at -= this.lengths[word[at] as number] as number) ids.push(word[at] as number);
    // A run of unknown code points is one unknown token.
    const merged: number[] = [];
    for (let i = 0; i < ids.length; i++) if (!(ids[i] === UNKNOWN && ids[i - 1] === UNKNOWN)) merged.push(ids[i] as number);
    return merged.reverse();
  }
}
