import { openServices, type ServiceExtras, type Services } from '../../../src/core/services';
import type { LcmConfig } from '../../../src/core/lcm/lcmConfig';
import { queryRows } from '../../../src/core/store/sqlite';
import { transcriptFixtures } from '../helpers/fixtures';
import { tempHome, WASM_PATH } from '../helpers/tempStore';

/** Small enough that the fixtures (the largest session has 117 events) still produce three levels. */
export const SMALL_DAG: Partial<LcmConfig> = { freshTailEvents: 4, leafChunkTokens: 800, leafMaxEvents: 12, condenseFanIn: 3, largeFileTokens: 1500, quietMs: 0 };

export async function openLcm(extras: ServiceExtras = {}, home = tempHome('lcm')): Promise<Services> {
  return openServices({ home, wasmPath: WASM_PATH }, { ...extras, lcm: { ...SMALL_DAG, ...extras.lcm } });
}

/** A store with every real fixture imported by the HistoryImporter and its DAG built. */
export async function importedFixtures(extras: ServiceExtras = {}): Promise<Services> {
  const s = await openLcm(extras);
  await s.importer.importPaths([transcriptFixtures()]);
  await s.lcm.buildAll();
  return s;
}

export function scalarNumber(s: Services, sql: string, params: (string | number)[] = []): number {
  return Number(Object.values(queryRows(s.store.db, sql, params)[0] ?? {})[0] ?? 0);
}

/** The session the biggest DAG was built for (the Codex fixture). */
export function deepestSession(s: Services): { sessionId: string; conversationId: number } {
  const r = queryRows(s.store.db, 'SELECT x.session_id, s.rowid AS n FROM lcm_summaries x JOIN sessions s ON s.id = x.session_id ORDER BY x.depth DESC, x.n LIMIT 1')[0];
  if (!r) throw new Error('no summaries were built');
  return { sessionId: String(r.session_id), conversationId: Number(r.n) };
}
