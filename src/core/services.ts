import { SessionBrowse } from './history/sessionBrowse';
import { MemoryLookup } from './lookup/memoryLookup';
import * as path from 'node:path';
import { ActivityLog } from './activity/activityLog';
import { ChaptersService } from './chapters/chaptersService';
import { chaptersModule } from './chapters/chaptersSchema';
import { errorModule } from './errors/errorSchema';
import { ErrorService, type ErrorMemory } from './errors/errorService';
import { GuideService, type GuideSource } from './guides/guides';
import { ForgetService } from './history/forgetService';
import { HistoryImporter } from './history/importer';
import { historyModule } from './history/historySchema';
import { HistoryService } from './history/historyService';
import type { LanguageModelPort } from './lcm/languageModel';
import type { DecisionModel } from './history/decisionModel';
import type { LcmConfig } from './lcm/lcmConfig';
import { lcmModule } from './lcm/lcmSchema';
import { LcmService } from './lcm/lcmService';
import { MemoryBrowse } from './memory/memoryBrowse';
import { MemoryService } from './memory/memoryService';
import { memoryModule } from './memory/memorySchema';
import { RecallService } from './memory/recall/recallService';
import { semanticConfigFrom, type SemanticConfig } from './memory/semantic/semanticConfig';
import { SemanticService } from './memory/semantic/semanticService';
import { VaultService } from './memory/vault/vaultService';
import { Redaction, type RedactionSettings } from './privacy/redaction';
import { redactionSettingsFrom } from './privacy/redactionSettings';
import { ResultWriter, type ResultSink } from './results/resultWriter';
import { RequestService } from './requests/requestService';
import { requestsModule } from './requests/requestsSchema';
import { MachineIdentity } from './rules/machine';
import { rulesModule } from './rules/rulesSchema';
import { RulesService } from './rules/rulesService';
import type { StoreModule } from './store/schema';
import { poolModule } from './pool/poolSchema';
import { Store, type StoreOptions } from './store/store';
import { transferModule } from './transfer/transferSchema';
import { TransferService } from './transfer/transferService';
import type { StoreRole } from './tools/toolDefinition';

/** Every aggregate's tables and operations; the store applies journal lines through these. */
const LOCAL_MODULES: readonly StoreModule[] = [memoryModule, historyModule, errorModule, requestsModule, lcmModule, chaptersModule, rulesModule, transferModule];
/** The pool's module applies other machines' operations through the others' appliers. */
export const STORE_MODULES: readonly StoreModule[] = [...LOCAL_MODULES, poolModule(LOCAL_MODULES)];

/** The services a tool may call. Tools never touch SQL; the store stays behind these. */
export interface Services {
  store: Store;
  /** Recollect's own tool calls, for a person to see; beside the store, never part of it. */
  activity: ActivityLog;
  memory: MemoryService;
  browse: MemoryBrowse;
  /** Imported sessions as the history views and commands list and open them. */
  sessions: SessionBrowse;
  /** The notes language server's completions and lookups. */
  lookup: MemoryLookup;
  history: HistoryService;
  importer: HistoryImporter;
  /** A person's forgetting of imported sessions and retention of raw tool outputs (commands and the CLI only: no tool offers it). */
  forget: ForgetService;
  errors: ErrorMemory;
  guides: GuideSource;
  results: ResultSink;
  /** Named connections, requests between agents and whats_new. */
  requests: RequestService;
  /** The summary DAG and the lcm_* tools. */
  lcm: LcmService;
  /** Verbatim chapters, continue/fork children, archive search and artifacts. */
  chapters: ChaptersService;
  /** Rule candidates and a person's per-machine approvals. */
  rules: RulesService;
  /** The host's language model (VS Code's vscode.lm); absent in the CLI, the MCP server and tests without a scripted one. */
  languageModel?: LanguageModelPort | undefined;
  /** Judges which runs chat_history may withhold as unrelated; only VS Code has one (setting-controlled). */
  decisionModel?: DecisionModel | undefined;
  /** get_context, search_memory, search_history, lookup_entity, memory_map, read_memory, retire/restore. */
  recall: RecallService;
  /** Recall by meaning: the vectors of memories and chat messages, indexed in the background; `nearest` ranks them. */
  semantic: SemanticService;
  /** export_memory, preview/apply/undo_import and `recollect restore`. */
  transfer: TransferService;
  /** Replaces secrets by placeholders on every write path (imports, memory, vault files, the tool-call log). */
  redaction: Redaction;
  /** Who owns the store and whether this process is it (core/owner), set by a host that joined the election; memory_status reports it. */
  storeRole?: (() => StoreRole) | undefined;
}

/** What only some hosts have: a language model, and (in tests) smaller DAG settings. */
export interface ServiceExtras {
  languageModel?: LanguageModelPort | undefined;
  decisionModel?: DecisionModel | undefined;
  lcm?: Partial<LcmConfig> | undefined;
  /**
   * The embedding model: the bundled one (`bundledModel(distDir)`), an OpenAI-compatible
   * endpoint, or `{ missing }` for none. Default: an endpoint named by RECOLLECT_EMBEDDINGS_URL,
   * else the bundled model beside the sql.js wasm (off, with the reason, where it is not there).
   */
  embeddings?: SemanticConfig | undefined;
  /**
   * Index new memories and chat messages in the background as they are written: on in the
   * long-lived hosts (the extension, `recollect mcp`, `recollect serve`), off by default so a
   * one-off command, a test, the eval or the bench never runs the model unasked.
   */
  semanticBackground?: boolean | undefined;
  /** ask_agent's hourly limit, or where to read it on each ask (VS Code's setting); default: RECOLLECT_ASK_LIMIT, else 30. */
  askLimitPerHour?: number | (() => number) | undefined;
  /** Extra patterns and scopes without redaction, or where to read them on each write (VS Code's settings); default: RECOLLECT_REDACTION_* from the environment. */
  redaction?: RedactionSettings | (() => RedactionSettings) | undefined;
}

export async function openServices(opts: Omit<StoreOptions, 'modules'>, extras: ServiceExtras = {}): Promise<Services> {
  const store = await Store.open({ ...opts, modules: STORE_MODULES });
  const semantic = new SemanticService(store, extras.embeddings ?? semanticConfigFrom(process.env, {}, path.dirname(opts.wasmPath)));
  if (extras.semanticBackground) semantic.startBackground();
  const redaction = new Redaction(extras.redaction ?? redactionSettingsFrom(), (problem) => store.warnings.push(problem));
  const vault = new VaultService(store, semantic, redaction);
  const activity = new ActivityLog(store.home, () => store.now);
  const base = {
    store,
    activity,
    redaction,
    semantic,
    memory: new MemoryService(store, vault, semantic, redaction),
    recall: new RecallService(store, vault, semantic),
    browse: new MemoryBrowse(store),
    sessions: new SessionBrowse(store),
    lookup: new MemoryLookup(store),
    history: new HistoryService(store),
    importer: new HistoryImporter(store, redaction),
    forget: new ForgetService(store, activity),
    errors: new ErrorService(store, redaction),
    guides: new GuideService(),
    results: new ResultWriter({ fallbackDirectory: path.join(store.home, 'results') }),
    requests: new RequestService(store, { redaction, ...(extras.askLimitPerHour === undefined ? {} : { askLimitPerHour: extras.askLimitPerHour }) }),
    transfer: new TransferService(store, vault, redaction),
  };
  const chapters = new ChaptersService(store, base.history);
  base.importer.onSessionImported((sessionId, events) => chapters.linkImported(sessionId, events));
  const rules = new RulesService(store, new MachineIdentity(path.join(store.home, 'machine.json')), redaction);
  // The lcm model is read on every use, so a host may attach one after opening.
  const services: Services = { ...base, chapters, rules, languageModel: extras.languageModel, decisionModel: extras.decisionModel, lcm: new LcmService(store, base.history, { config: extras.lcm, model: () => services.languageModel }) };
  return services;
}
