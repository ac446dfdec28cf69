import { ExcludeGlobs } from '../history/excludeGlobs';
import { listMemoryResources, readMemoryResource } from '../resources/memoryResources';
import type { Services } from '../services';
import { WriteRefusedError } from '../store/errors';
import { invokeTool } from '../tools/invoke';
import { findTool } from '../tools/registry';
import type { StoreRole } from '../tools/toolDefinition';
import type { Call } from './protocol';

/**
 * The service methods a client may call by name (`op: 'service'`): what the extension host's
 * views, commands and language server and the CLI's own commands call (through
 * serviceProxy/remoteServices, in the owner too). Their arguments and answers are plain JSON.
 * Anything else is refused, so the socket is never a way to reach the store's internals.
 */
export const SERVICE_METHODS = {
  'memory.status': false,
  'memory.retrieve': false,
  'memory.searchText': false,
  'history.counts': false,
  'history.search': false,
  'browse.vaultNotes': false,
  'browse.retired': false,
  'browse.factsByRef': false,
  'browse.entry': false,
  'browse.entities': false,
  'browse.dailyLog': false,
  'browse.recent': false,
  'browse.version': false,
  'browse.browseVersion': false,
  'browse.requests': false,
  'sessions.list': false,
  'sessions.summaries': false,
  'sessions.runCounts': false,
  'sessions.facets': false,
  'sessions.rows': false,
  'sessions.eventText': false,
  'sessions.kindAt': false,
  'sessions.resultOf': false,
  'lookup.entities': false,
  'lookup.predicates': false,
  'lookup.factIds': false,
  'lookup.entryIds': false,
  'lookup.notePaths': false,
  'lookup.notePath': false,
  'lookup.factKey': false,
  'lookup.firstKnownSubject': false,
  'lookup.entry': false,
  'lookup.entryOfFact': false,
  'history.currentSession': false,
  'errors.recent': false,
  'chapters.ceiling': false,
  'chapters.childrenOf': false,
  'chapters.chaptersOf': false,
  'chapters.lineage': false,
  'chapters.search': false,
  'chapters.chatEndingWith': false,
  'chapters.firstMessageOf': false,
  'rules.list': false,
  'rules.view': false,
  'forget.preview': false,
  'forget.forgotten': false,
  'activity.recent': false,
  'semantic.state': false,
  // Writes: an answer lost with its owner is refused, never retried (see ownerClient).
  'recall.retire': true,
  'recall.restore': true,
  'rules.approve': true,
  'rules.reject': true,
  'forget.forget': true,
  'forget.remember': true,
  'forget.dropToolOutputs': true,
  'forget.applyRetention': true,
  'transfer.restore': true,
  'lcm.buildAll': true,
  'chapters.door': true,
  'store.rebuild': true,
} as const satisfies Record<string, boolean>;

export type ServiceMethod = keyof typeof SERVICE_METHODS;

/** Whether a call may change the store: such a call whose answer was lost with its owner is never sent again. */
export function callWrites(call: Call): boolean {
  switch (call.op) {
    case 'tool':
      return !(findTool(call.name)?.effects.readOnly ?? false);
    case 'import':
    case 'handover':
      return true;
    case 'service':
      return (SERVICE_METHODS as Record<string, boolean>)[call.method] ?? true;
    default:
      // Listing and reading resources read; noting a connection only moves its "last seen" time.
      return false;
  }
}

/** Runs one client's call on the owner's services, through the same dispatch and validation as the owner's own calls. */
export async function runCall(services: Services, call: Call, role: StoreRole): Promise<unknown> {
  switch (call.op) {
    case 'tool': {
      const tool = findTool(call.name);
      if (!tool) throw new Error(`unknown tool "${call.name}"`);
      return invokeTool(tool, call.input, services, { client: call.client, workspace: call.workspace, store: role, callerOpens: call.callerOpens === true });
    }
    case 'resources.list':
      return listMemoryResources(services, call.offset, call.limit);
    case 'resources.read':
      return readMemoryResource(services, call.uri);
    case 'connection.seen':
      return services.requests.connections.seen(call.name);
    case 'import': {
      const report = await services.importer.importPaths(call.paths, undefined, new ExcludeGlobs(call.globs));
      const summaries = await services.lcm.buildAll();
      return { ...report, summaries };
    }
    case 'service': {
      if (!Object.hasOwn(SERVICE_METHODS, call.method)) throw new Error(`"${call.method}" is not a service method a client may call`);
      const [aggregate, method] = call.method.split('.') as [string, string];
      const target = (services as unknown as Record<string, Record<string, (...args: unknown[]) => unknown>>)[aggregate];
      const fn = target?.[method];
      if (typeof fn !== 'function') throw new Error(`this owner has no service method "${call.method}"`);
      return await fn.apply(target, call.args);
    }
    default:
      throw new Error(`this owner does not know the call "${(call as { op: string }).op}"`);
  }
}

/** An error as the reply carries it: a refused write keeps its reason and budget. */
export function errorReply(id: number, err: unknown): { id: number; error: string; refused?: { reason: string; budget?: unknown } } {
  if (err instanceof WriteRefusedError) return { id, error: err.message, refused: { reason: err.reason, budget: err.budget } };
  return { id, error: err instanceof Error ? err.message : String(err) };
}
