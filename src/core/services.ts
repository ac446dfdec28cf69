import * as path from 'node:path';
import { errorModule } from './errors/errorSchema';
import { ErrorService, type ErrorMemory } from './errors/errorService';
import { GuideService, type GuideSource } from './guides/guides';
import { HistoryImporter } from './history/importer';
import { historyModule } from './history/historySchema';
import { HistoryService } from './history/historyService';
import { MemoryBrowse } from './memory/memoryBrowse';
import { MemoryService } from './memory/memoryService';
import { memoryModule } from './memory/memorySchema';
import { ResultWriter, type ResultSink } from './results/resultWriter';
import { RequestService } from './requests/requestService';
import { requestsModule } from './requests/requestsSchema';
import type { StoreModule } from './store/schema';
import { Store, type StoreOptions } from './store/store';

/** Every aggregate's tables and operations; the store applies journal lines through these. */
export const STORE_MODULES: readonly StoreModule[] = [memoryModule, historyModule, errorModule, requestsModule];

/** The services a tool may call. Tools never touch SQL; the store stays behind these. */
export interface Services {
  store: Store;
  memory: MemoryService;
  browse: MemoryBrowse;
  history: HistoryService;
  importer: HistoryImporter;
  errors: ErrorMemory;
  guides: GuideSource;
  results: ResultSink;
  /** Named connections, requests between agents and whats_new. */
  requests: RequestService;
}

export async function openServices(opts: Omit<StoreOptions, 'modules'>): Promise<Services> {
  const store = await Store.open({ ...opts, modules: STORE_MODULES });
  return {
    store,
    memory: new MemoryService(store),
    browse: new MemoryBrowse(store),
    history: new HistoryService(store),
    importer: new HistoryImporter(store),
    errors: new ErrorService(store),
    guides: new GuideService(),
    results: new ResultWriter({ fallbackDirectory: path.join(store.home, 'results') }),
    requests: new RequestService(store),
  };
}
