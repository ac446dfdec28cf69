import * as fs from 'node:fs';
import type { Redaction } from '../../privacy/redaction';
import { NOTE_MAX_BYTES } from './vaultIndexer';
import { absolutePath, classifyPath } from './vaultLayout';
import type { VaultChange } from './vaultState';
import { fileStatOf, writeFileSynced } from './vaultWriter';

/**
 * Replaces the secrets in the changed vault files, in the files themselves, before the indexer
 * reads them: a note is the vault's copy of a memory, and a password typed into one must sit
 * neither in the index and the journal nor in the Markdown beside them. A file without secrets
 * (or in a scope with redaction off) is not touched; one that changes meanwhile is left for the
 * next pass, since its new text was never read here.
 */
export async function redactVaultFiles(root: string, changes: readonly VaultChange[], redaction: Redaction): Promise<void> {
  const read: { abs: string; scope: string; content: string; stat: { size: number; mtimeMs: number } }[] = [];
  for (const c of changes) {
    const place = classifyPath(c.path);
    if ('problem' in place || !redaction.enabledFor(place.scope)) continue;
    const abs = absolutePath(root, c.path);
    const stat = fileStatOf(abs);
    if (!stat || stat.size > NOTE_MAX_BYTES) continue;
    read.push({ abs, scope: place.scope, content: fs.readFileSync(abs, 'utf8'), stat });
  }
  const byScope = new Map<string, typeof read>();
  for (const f of read) byScope.set(f.scope, [...(byScope.get(f.scope) ?? []), f]);
  for (const [scope, files] of byScope) {
    const redacted = await redaction.texts(files.map((f) => f.content), scope);
    files.forEach((f, i) => {
      const next = redacted[i] as string;
      const now = fileStatOf(f.abs);
      if (next === f.content || !now || now.size !== f.stat.size || now.mtimeMs !== f.stat.mtimeMs) return;
      writeFileSynced(f.abs, next);
    });
  }
}
