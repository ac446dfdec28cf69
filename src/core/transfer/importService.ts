import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { parseFrontMatter } from '../memory/vault/frontMatter';
import { retireMemory } from '../memory/vault/retirement';
import { absolutePath, classifyPath } from '../memory/vault/vaultLayout';
import { Redaction } from '../privacy/redaction';
import type { VaultService } from '../memory/vault/vaultService';
import { sha256 } from '../memory/vault/vaultState';
import { writeFileSynced } from '../memory/vault/vaultWriter';
import { isRefusal, refuse } from '../refusal';
import type { Store } from '../store/store';
import { queryRows, type Database, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import { checkBatch, IMPORT_FOLDER, type PreviewInput } from './importCheck';
import type { CreatedFile, ImportApplied, ImportStaged, ImportUndone, StagedFile } from './transferSchema';

/** How long a preview stays applicable: long enough to read it, short enough that the vault has not moved on. */
export const APPLY_WINDOW_MS = 15 * 60 * 1000;

type Disk = 'new' | 'same' | 'different';

/**
 * preview_import / apply_import / undo_import: Markdown notes an agent read from a person's disk
 * become notes in the vault under Imported/<label>/. Additive only: a different file already at
 * a target path is kept and reported, never replaced. Notes go through the vault's own writer and
 * indexer, so search and get_context see them exactly like a note a person saved there.
 */
export class ImportService {
  constructor(
    private readonly store: Store,
    private readonly vault: VaultService,
    private readonly redaction: Redaction = new Redaction(),
  ) {}

  async preview(input: PreviewInput & { stage?: boolean | undefined }, client: string) {
    const now = this.store.now;
    const given = checkBatch(input, now);
    if (isRefusal(given)) return given;
    // Staged files sit in the journal until applied: their secrets are replaced before that.
    const checked = { ...given, files: await this.redactFiles(given.files) };
    const plan = this.plan(checked.files);
    const report = {
      label: input.label,
      folder: `${IMPORT_FOLDER}/${input.label}/`,
      files: checked.files.length,
      bytes: checked.bytes,
      would_create: plan.filter((p) => p.disk === 'new').map((p) => p.file.target),
      conflicts: plan.filter((p) => p.disk === 'different').map((p) => ({ index: p.file.index, path: p.file.target, reason: 'a different file is already there; it would be kept and this file not written' })),
      unchanged: plan.filter((p) => p.disk === 'same').map((p) => p.file.target),
      excluded: checked.excluded,
      dates_clamped: checked.clamped,
      creates: 'notes' as const,
    };
    if (input.stage === false) return { ok: true as const, staged: false as const, ...report, note: 'stage was false: checked only, nothing is held' };
    const id = randomUUID();
    await this.store.commit(() => {
      const op: ImportStaged = { op: 'transfer.import.staged', at: this.store.now, id, label: input.label, client, files: checked.files };
      return { op, result: undefined };
    });
    return { ok: true as const, staged: true as const, batchId: id, expires_at: iso(now + APPLY_WINDOW_MS), ...report };
  }

  private async redactFiles(files: readonly StagedFile[]): Promise<StagedFile[]> {
    const out: StagedFile[] = [];
    for (const f of files) {
      const place = classifyPath(f.target);
      out.push({ ...f, markdown: await this.redaction.text(f.markdown, 'problem' in place ? 'global' : place.scope) });
    }
    return out;
  }

  async apply(batchId: string) {
    const result = await this.store.commit((db) => {
      const batch = batchRow(db, batchId);
      if (!batch) return { result: refuse(`no staged import ${batchId}: preview_import with stage left on returns the batchId`) };
      if (batch.applied_at !== null) return { result: refuse(`import ${batchId} was already applied at ${iso(Number(batch.applied_at))}; undo_import takes it back`) };
      const now = this.store.now;
      const age = now - Number(batch.staged_at);
      if (age > APPLY_WINDOW_MS) {
        return { result: refuse(`import ${batchId} was previewed ${Math.round(age / 1000)} s ago (at ${iso(Number(batch.staged_at))}); apply_import takes a preview at most ${APPLY_WINDOW_MS / 1000} s old. Run preview_import again. Nothing was written.`) };
      }
      const created: CreatedFile[] = [];
      const conflicts: string[] = [];
      const unchanged: string[] = [];
      const texts = new Map<string, string>();
      for (const p of this.plan(JSON.parse(String(batch.files)) as StagedFile[])) {
        if (p.disk === 'same') unchanged.push(p.file.target);
        else if (p.disk === 'different') conflicts.push(p.file.target);
        else {
          try {
            writeFileSynced(absolutePath(this.vault.root, p.file.target), p.file.markdown, true);
            created.push({ path: p.file.target, hash: sha256(p.file.markdown) });
            texts.set(p.file.target, p.file.markdown);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
            conflicts.push(p.file.target); // appeared after we looked: still never overwritten
          }
        }
      }
      const op: ImportApplied = { op: 'transfer.import.applied', at: now, id: batchId, created, conflicts, unchanged };
      return { op, result: { ...op, texts } };
    });
    if (isRefusal(result)) return result;
    // The vault's indexer reads the new files, exactly as index_memory would.
    const tally = await this.vault.indexPaths(result.created.map((c) => c.path));
    return {
      ok: true as const,
      batchId,
      applied_at: iso(result.at),
      created: result.created.map((c) => c.path),
      conflicts: result.conflicts.map((path) => ({ path, reason: 'a different file is already there; it was kept and this file not written' })),
      unchanged: result.unchanged,
      indexed: { files: tally.files.added + tally.files.modified, chunks: tally.chunks, skipped: tally.skipped },
      // The indexer dates each note no later than its file was written; these claimed a later date.
      dates_clamped: result.created.flatMap((c) => {
        const date = parseFrontMatter(result.texts.get(c.path) ?? '').date;
        return date !== undefined && date > result.at ? [{ path: c.path, claimed: iso(date), clamped_to: 'the file\'s write time' }] : [];
      }),
      creates: 'notes' as const,
    };
  }

  async undo(batchId: string) {
    const batch = batchRow(this.store.db, batchId);
    if (!batch) return refuse(`no import ${batchId} in this store`);
    if (batch.applied_at === null) return refuse(`import ${batchId} was previewed but never applied: there is nothing to undo`);
    if (batch.undone_at !== null) return refuse(`import ${batchId} was already undone at ${iso(Number(batch.undone_at))}`);
    const retired: string[] = [];
    const kept: { path: string; reason: string }[] = [];
    for (const c of JSON.parse(String(batch.created)) as CreatedFile[]) {
      const abs = absolutePath(this.vault.root, c.path);
      let content: Buffer | undefined;
      try {
        content = fs.readFileSync(abs);
      } catch {
        content = undefined;
      }
      if (content === undefined) {
        kept.push({ path: c.path, reason: 'the file is no longer in the vault (deleted, moved or retired since the import)' });
        continue;
      }
      if (sha256(content) !== c.hash) {
        kept.push({ path: c.path, reason: 'edited after the import: kept so the edit is not lost' });
        continue;
      }
      const r = await retireMemory(this.store, this.vault, `note:${c.path}`);
      if (isRefusal(r)) kept.push({ path: c.path, reason: r.reason });
      else retired.push(c.path);
    }
    const done = await this.store.commit((db) => {
      const again = batchRow(db, batchId);
      if (again?.undone_at !== null) return { result: refuse(`import ${batchId} was undone meanwhile by another process`) };
      const op: ImportUndone = { op: 'transfer.import.undone', at: this.store.now, id: batchId, retired, kept: kept.map((k) => k.path) };
      return { op, result: op };
    });
    if (isRefusal(done)) return done;
    return {
      ok: true as const,
      batchId,
      undone_at: iso(done.at),
      retired: retired.map((p) => `note:${p}`),
      kept,
      note: 'retired notes leave recall and the vault but stay in the store; restore_memory brings one back. Files that were there before the import were never touched.',
    };
  }

  private plan(files: StagedFile[]): { file: StagedFile; disk: Disk }[] {
    return files.map((file) => {
      let existing: string | undefined;
      try {
        existing = fs.readFileSync(absolutePath(this.vault.root, file.target), 'utf8');
      } catch {
        existing = undefined;
      }
      return { file, disk: existing === undefined ? 'new' : existing === file.markdown ? 'same' : 'different' };
    });
  }
}

function batchRow(db: Database, id: string): Record<string, SqlValue> | undefined {
  return queryRows(db, 'SELECT * FROM import_batches WHERE id = ?', [id])[0];
}
