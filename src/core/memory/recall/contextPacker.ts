import { countTokens } from '../../text/tokens';

/** Measured costs of item JSON, kept across calls: the same facts come back again and again. */
const tokenCache = new Map<string, number>();
const TOKEN_CACHE_MAX = 5_000;

export function cachedTokens(text: string): number {
  let n = tokenCache.get(text);
  if (n === undefined) {
    n = countTokens(text);
    if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear();
    tokenCache.set(text, n);
  }
  return n;
}

export interface PackedLists<F, N> {
  facts: F[];
  notes: N[];
}

export interface Budget {
  requested: number;
  used: number;
  remaining: number;
}

/**
 * Fills a reply up to a token budget, measuring as it goes, and never past it. Every item is
 * measured as the JSON it becomes (the reply the model reads is JSON.stringify of the result).
 * Separately measured pieces can tokenize differently once joined, so the finished reply is
 * measured whole; in the rare case it comes out over, the last item added goes and it is
 * measured again. `used` is that final measurement, not an estimate.

 */
export class ContextPacker<F extends object, N extends object> {
  private readonly lists: PackedLists<F, N> = { facts: [], notes: [] };
  private readonly order: ('facts' | 'notes')[] = [];
  private used = 0;
  readonly leftOut = { facts: 0, notes: 0 };

  /**
   * `frame(lists, budget, leftOut)` builds the whole reply; it is called with placeholder numbers
   * as wide as the real ones can be, so the frame's cost is an upper bound.
   */
  constructor(
    private readonly maxTokens: number,
    private readonly frame: (lists: PackedLists<F, N>, budget: Budget, leftOut: { facts: number; notes: number }) => object,
  ) {
    const wide = 10 ** String(maxTokens).length - 1;
    this.used = countTokens(JSON.stringify(frame({ facts: [], notes: [] }, { requested: maxTokens, used: wide, remaining: wide }, { facts: 99_999, notes: 99_999 })));
  }

  get remaining(): number {
    return this.maxTokens - this.used;
  }

  /** Adds the item if it fits; counts it as left out otherwise. */
  add(list: 'facts' | 'notes', item: F | N): boolean {
    const cost = this.costIfItCanFit(item);
    if (cost === undefined || this.used + cost > this.maxTokens) {
      this.leftOut[list]++;
      return false;
    }
    (this.lists[list] as object[]).push(item);
    this.order.push(list);
    this.used += cost;
    return true;
  }

  /** Would this item fit now? */
  fits(item: object): boolean {
    const cost = this.costIfItCanFit(item);
    return cost !== undefined && this.used + cost <= this.maxTokens;
  }

  /**
   * The item's cost, or undefined without measuring when it cannot fit. Measuring is most of
   * what get_context spends, and JSON of ordinary text runs 2.5 to 5 characters a token, so
   * an item of more than 12 characters per token left is passed over unmeasured. Only a text of
   * long repeated runs could have fitted at that size; it is then left out, never let over.
   */
  private costIfItCanFit(item: object): number | undefined {
    const json = JSON.stringify(item);
    if (json.length > (this.maxTokens - this.used) * 12) return undefined;
    return cachedTokens(json) + 1;
  }

  cost(item: object): number {
    // +1 for the comma that joins it to its neighbour.
    return cachedTokens(JSON.stringify(item)) + 1;
  }

  finish(): { reply: object; budget: Budget } {
    for (;;) {
      const settled = this.settle();
      if (settled.budget.used <= this.maxTokens) return settled;
      const last = this.order.pop();
      if (!last) return settled; // the frame alone: callers keep it far below the minimum budget
      const dropped = this.lists[last].pop();
      if (dropped) this.used -= this.cost(dropped);
      this.leftOut[last]++;
    }
  }

  /**
   * The numbers are part of the reply, so `used` must be a value the reply measures to with
   * itself inside. o200k splits digit runs into groups of at most three digits whatever
   * surrounds them, so two numbers with the same count of digits cost the same: one
   * measurement with a guess of the right width is exact, and usually one is all it takes.
   */
  private settle(): { reply: object; budget: Budget } {
    let guess = this.used;
    for (let i = 0; ; i++) {
      const budget = { requested: this.maxTokens, used: guess, remaining: this.maxTokens - guess };
      const measured = countTokens(JSON.stringify(this.frame(this.lists, budget, this.leftOut)));
      const fits = measured <= this.maxTokens && guess <= this.maxTokens;
      const sameWidth = fits && digits(measured) === digits(guess) && digits(this.maxTokens - measured) === digits(this.maxTokens - guess);
      if (measured === guess || sameWidth || i >= 3) {
        const exact = { requested: this.maxTokens, used: measured, remaining: this.maxTokens - measured };
        return { reply: this.frame(this.lists, exact, this.leftOut), budget: exact };
      }
      guess = measured;
    }
  }
}

function digits(n: number): number {
  return String(n).length;
}
