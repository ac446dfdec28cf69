import * as fs from 'node:fs';
import { absolutePath, classifyPath } from '../core/memory/vault/vaultLayout';
import { isRefusal } from '../core/refusal';
import { excerpt } from '../core/requests/agentText';
import type { RemoteServices } from '../core/owner/serviceProxy';
import type { ChangeOutcome, OpenTarget } from '../../webview/shared/protocol';

// No `vscode` here: the webview tests drive these with ports that stand in for VS Code's dialogs.

/** What only VS Code can do for the memory browser: ask the person, and open things where they live. */
export interface MemoryViewPorts {
  /** A modal question; true only when the person picked `action`. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
  openFile(absolutePath: string): Promise<void>;
  /** The Session History panel, at this session. */
  openSession(sessionId: string): Promise<void>;
  /** The Review Rules panel. */
  openRules(): Promise<void>;
  /** The vault's folder (the store home's): files open from this process, whichever process owns the store. */
  vaultRoot: string;
}

/**
 * Retire and restore from the sidebar. The webview sends only an id; the host asks the person in a
 * modal it builds from the store (never from text the page sent), then calls the same service
 * retire_memory and restore_memory call, so the sidebar cannot do anything the tools cannot.
 */
export async function retireFromView(services: RemoteServices, ports: MemoryViewPorts, id: string): Promise<ChangeOutcome> {
  const ok = await ports.confirm(`Retire ${await describe(services, id)}?`, 'It leaves recall (get_context, search) but stays in the store. Restore in the Retired section brings it back exactly.', 'Retire');
  if (!ok) return { outcome: 'cancelled', message: 'Nothing was retired.' };
  const r = await services.recall.retire(id);
  if (isRefusal(r)) return { outcome: 'refused', message: r.reason };
  return { outcome: 'done', message: `Retired ${id}. It is listed under Retired.` };
}

export async function restoreFromView(services: RemoteServices, ports: MemoryViewPorts, id: string): Promise<ChangeOutcome> {
  const ok = await ports.confirm(`Restore ${await describe(services, id)}?`, 'It returns to recall exactly as it was. A file now at its path is never overwritten.', 'Restore');
  if (!ok) return { outcome: 'cancelled', message: 'Nothing was restored.' };
  const r = await services.recall.restore(id);
  if (isRefusal(r)) return { outcome: 'refused', message: r.reason };
  return { outcome: 'done', message: `Restored ${id}.` };
}

export async function openFromView(services: RemoteServices, ports: MemoryViewPorts, target: OpenTarget): Promise<{ opened: boolean; reason?: string }> {
  switch (target.kind) {
    case 'rules':
      await ports.openRules();
      return { opened: true };
    case 'session': {
      if (!(await services.sessions.summaries([target.sessionId])).length) return { opened: false, reason: `no imported session ${target.sessionId}` };
      await ports.openSession(target.sessionId);
      return { opened: true };
    }
    case 'vault': {
      const place = classifyPath(target.path);
      if ('problem' in place) return { opened: false, reason: place.problem };
      const file = absolutePath(ports.vaultRoot, target.path);
      if (!fs.existsSync(file)) return { opened: false, reason: `${target.path} is not in the vault any more (retired, moved or deleted)` };
      await ports.openFile(file);
      return { opened: true };
    }
  }
}

/** How the modal names the memory: a fact by its words, anything else by its id (which holds its path). */
async function describe(services: RemoteServices, id: string): Promise<string> {
  const fact = (await services.browse.factsByRef([id]))[id];
  if (fact) return `the fact “${fact.subject} ${fact.predicate} ${fact.object}”`.slice(0, 300);
  const entry = id.startsWith('entry:') ? await services.browse.entry(id) : undefined;
  if (entry) return `the ${entry.day} log entry “${excerpt(entry.text, 200)}”`;
  return id.startsWith('note:') ? `the note ${id.slice(5, 300)}` : id.slice(0, 300);
}
