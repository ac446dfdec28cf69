import type { HistoryService, SessionHint } from '../history/historyService';
import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { resolveScope, type ConversationScope, type ScopeArgs } from './conversations';
import { DagBuilder, type BuildReport } from './dagBuilder';
import { expandSummaries, type ExpandRequest } from './expandSummaries';
import { ExpandQuery, type CallExpand, type ExpandQueryInput } from './expandQuery';
import { ExpandGrants } from './grants';
import type { LanguageModelPort, ModelToolSpec } from './languageModel';
import { DEFAULT_LCM_CONFIG, type LcmConfig } from './lcmConfig';
import { LcmGrep, type GrepRequest } from './lcmGrep';
import { LcmReads } from './lcmReads';
import { extractiveSummariser, ModelSummariser, type Summariser } from './summariser';

export interface LcmOptions {
  config?: Partial<LcmConfig> | undefined;
  /** The host's language model, when it has one; read on every use, so it may arrive later. */
  model?: (() => LanguageModelPort | undefined) | undefined;
}

/**
 * Lossless context over imported history: the summary DAG (built incrementally after imports),
 * lcm_grep, lcm_describe, lcm_expand_query and the grant-guarded lcm_expand.
 */
export class LcmService {
  readonly config: LcmConfig;
  readonly grants: ExpandGrants;
  readonly reads: LcmReads;
  private readonly builder: DagBuilder;
  private readonly grepper: LcmGrep;
  private readonly query: ExpandQuery;
  private readonly modelSummariser: Summariser;

  constructor(
    private readonly store: Store,
    private readonly history: HistoryService,
    options: LcmOptions = {},
  ) {
    this.config = { ...DEFAULT_LCM_CONFIG, ...options.config };
    const model = options.model ?? (() => undefined);
    this.grants = new ExpandGrants(() => Date.now());
    this.reads = new LcmReads(store);
    this.modelSummariser = new ModelSummariser(model);
    this.builder = new DagBuilder(store, () => this.config, () => (model()?.available() ? this.modelSummariser : extractiveSummariser));
    this.grepper = new LcmGrep(store);
    this.query = new ExpandQuery(store, this.reads, this.grants, () => this.config, model);
  }

  buildFor(sessionId: string): Promise<BuildReport> {
    return this.builder.buildFor(sessionId);
  }

  buildAll(): Promise<BuildReport> {
    return this.builder.buildAll();
  }

  scope(hint: SessionHint, args: ScopeArgs): ConversationScope | Refusal {
    return resolveScope(this.store.db, this.history, hint, args);
  }

  grep(req: GrepRequest, scope: ConversationScope) {
    return this.grepper.grep(req, scope);
  }

  describe(id: string, scope: ConversationScope) {
    return this.reads.describe(id, scope);
  }

  expandQuery(input: ExpandQueryInput, scope: ConversationScope, callExpand: CallExpand, expandTool: ModelToolSpec) {
    return this.query.run(input, scope, callExpand, expandTool);
  }

  /** lcm_expand itself: only with a live grant, which only the expand_query loop in this process holds. */
  expand(grantToken: string | undefined, req: ExpandRequest): object | Refusal {
    const grant = this.grants.check(grantToken);
    if ('refused' in grant) {
      return refuse(`lcm_expand is reserved for the sub-agent that lcm_expand_query starts (${grant.refused}). Use lcm_expand_query with your question instead; lcm_describe shows one summary in full.`);
    }
    return expandSummaries(this.store, this.reads, grant, req);
  }
}
