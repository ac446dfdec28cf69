import { refuse, type Refusal } from '../../refusal';
import type { Store } from '../../store/store';
import { scopeProblem } from '../scope';
import type { SemanticService } from '../semantic/semanticService';
import { retireMemory, restoreMemory } from '../vault/retirement';
import type { VaultService } from '../vault/vaultService';
import { getContext, type GetContextInput } from './getContext';
import { lookupEntity } from './lookupEntity';
import { memoryMap, type MemoryMapInput } from './memoryMap';
import { DocumentCounts } from './queryPruning';
import { contentWords } from './queryWords';
import { readMemory } from './readMemory';
import { searchHistory, type SearchHistoryInput } from './searchHistory';
import { searchMemory, type SearchMemoryInput } from './searchMemory';

/** Memories taken from the semantic ranking into get_context's fusion. */
export const SEMANTIC_CANDIDATES = 200;

/**
 * The memory tools beyond saving and keyword search: recall within a budget, meaning search,
 * promoted history, entities, the map, one memory in full, and retiring and restoring. Each
 * lives in its own module; this class only hands them the store, the vault and the semantic
 * index, so a tool module sees one service.
 */
export class RecallService {
  private readonly counts = new DocumentCounts();

  constructor(
    private readonly store: Store,
    readonly vault: VaultService,
    readonly semantic: SemanticService,
  ) {}

  /**
   * The query's embedding starts in the model's worker before the keyword search runs on this
   * thread, so the two overlap; get_context fuses what both found.
   */
  getContext(input: GetContextInput): Promise<object | Refusal> {
    // A request with no searchable words gets the profile: its embedding would go unused.
    const near = input.query === undefined || !contentWords(input.query).length ? undefined : this.semantic.nearest(input.query, { corpus: 'memory', k: SEMANTIC_CANDIDATES, scope: input.scope });
    return getContext(this.store, () => this.vault.index(), input, this.counts, near);
  }

  searchMemory(input: SearchMemoryInput): Promise<object | Refusal> {
    return searchMemory(this.store, this.semantic, input, this.counts);
  }

  searchHistory(input: SearchHistoryInput) {
    return searchHistory(this.store, this.vault.root, () => this.vault.index(), input);
  }

  lookupEntity(input: { name: string; scope?: string | undefined }) {
    if (input.scope !== undefined) {
      const bad = scopeProblem(input.scope);
      if (bad) return refuse(bad);
    }
    if (!input.name.trim()) return refuse('name is only whitespace');
    return lookupEntity(this.store.db, input.name, input.scope);
  }

  memoryMap(input: MemoryMapInput): object | Refusal {
    return memoryMap(this.store.db, this.store.now, input);
  }

  readMemory(id: string): object | Refusal {
    const changed = new Set(this.vault.monitor.check().changes.map((c) => c.path));
    return readMemory(this.store.db, this.vault.root, changed, id);
  }

  retire(id: string): Promise<object | Refusal> {
    return retireMemory(this.store, this.vault, id);
  }

  restore(id: string): Promise<object | Refusal> {
    return restoreMemory(this.store, this.vault, id);
  }
}
