import { HistoryImporter } from './history/importer';
import { historyModule } from './history/historySchema';
import { HistoryService } from './history/historyService';
import { MemoryService } from './memory/memoryService';
import { memoryModule } from './memory/memorySchema';
import type { StoreModule } from './store/schema';
import { Store, type StoreOptions } from './store/store';

/** Every aggregate's tables and operations; the store applies journal lines through these. */
export const STORE_MODULES: readonly StoreModule[] = [memoryModule, historyModule];

/** The services a tool may call. Tools never touch SQL; the store stays behind these. */
export interface Services {
  store: Store;
  memory: MemoryService;
  history: HistoryService;
  importer: HistoryImporter;
}

export async function openServices(opts: Omit<StoreOptions, 'modules'>): Promise<Services> {
  const store = await Store.open({ ...opts, modules: STORE_MODULES });
  return { store, memory: new MemoryService(store), history: new HistoryService(store), importer: new HistoryImporter(store) };
}
