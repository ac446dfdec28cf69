import type { VaultService } from '../memory/vault/vaultService';
import type { Redaction } from '../privacy/redaction';
import type { Store } from '../store/store';
import type { Section } from './exportFormat';
import { exportPage, EXPORT_PAGE_TOKENS } from './exportPages';
import type { PreviewInput } from './importCheck';
import { ImportService } from './importService';
import { importExport } from './restoreExport';

/** export_memory, the import tools and `recollect restore`: moving a memory in and out as Markdown. */
export class TransferService {
  readonly imports: ImportService;

  constructor(
    private readonly store: Store,
    private readonly vault: VaultService,
    private readonly redaction?: Redaction,
  ) {
    this.imports = new ImportService(store, vault, redaction);
  }

  /** One page of the export. Unindexed edits are indexed first, so the export holds what the vault holds. */
  async exportMemory(input: { section?: Section | undefined; offset?: number | undefined }, budgetTokens = EXPORT_PAGE_TOKENS) {
    const changed = this.vault.monitor.scan().changes.map((c) => c.path);
    if (changed.length) await this.vault.indexPaths(changed);
    return exportPage(this.store.db, this.vault.root, this.store.now, input.section ?? 'ledger', input.offset ?? 0, budgetTokens);
  }

  preview(input: PreviewInput & { stage?: boolean | undefined }, client: string) {
    return this.imports.preview(input, client);
  }

  apply(batchId: string) {
    return this.imports.apply(batchId);
  }

  undo(batchId: string) {
    return this.imports.undo(batchId);
  }

  restore(document: string) {
    return importExport(this.store, this.vault, document, this.redaction);
  }
}
