import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Where Markdown memory lives. One vault folder in the store home, so every surface (VS Code,
 * the MCP server, the CLI) sees the same files and a person can open the whole memory as one
 * folder. Project scopes are sub-folders rather than separate vaults: one file watcher, one
 * scan, and a note's scope is read from its path alone, so a path id (`note:<path>`) says
 * everything needed to find the file and its scope.
 *
 *   vault/daily/YYYY-MM-DD.md                       global daily log
 *   vault/<any>.md                                  global free notes
 *   vault/history/<any>.md                          owner-promoted chat-history notes (search_history)
 *   vault/projects/<slug>/daily/YYYY-MM-DD.md       project:<slug> daily log
 *   vault/projects/<slug>/history/<any>.md          project-scoped promoted history
 *   vault/projects/<slug>/<any>.md                  project:<slug> free notes
 *   vault/teams/<name>/…                            team:<name>, laid out as a project (docs/team-pool.md)
 *
 * Folders starting with "." (.obsidian, .git, .trash) and node_modules are never read.
 */
export const VAULT_FOLDER = 'vault';
export const HISTORY_FOLDER = 'history';
const PROJECTS = 'projects';
const TEAMS = 'teams';
/** The scope kinds that live in a folder of their own, by folder. */
const SCOPE_FOLDERS: Record<string, string> = { [PROJECTS]: 'project', [TEAMS]: 'team' };
const DAILY = /^daily\/(\d{4}-\d{2}-\d{2})\.md$/;
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export type VaultKind = 'daily' | 'note' | 'history';

export interface VaultPlace {
  scope: string;
  kind: VaultKind;
  /** For daily logs, the day the file holds. */
  day?: string;
}

export function vaultRoot(home: string): string {
  return path.join(home, VAULT_FOLDER);
}

/** The daily log a scope's entries for one day go to, relative to the vault. */
export function dailyPath(scope: string, day: string): string {
  return `${scopePrefix(scope)}daily/${day}.md`;
}

/** The vault folder prefix of a scope ("" for global, "projects/<slug>/" for a project, "teams/<name>/" for a team). */
export function scopePrefix(scope: string): string {
  if (scope === 'global') return '';
  const colon = scope.indexOf(':');
  return `${scope.startsWith('team:') ? TEAMS : PROJECTS}/${scope.slice(colon + 1)}/`;
}

/**
 * What a vault-relative path is: its scope and kind, or why it cannot be a memory (a path that
 * leaves the vault, a hidden folder, a project folder whose name is not a valid slug).
 */
export function classifyPath(rel: string): VaultPlace | { problem: string } {
  const problem = relPathProblem(rel);
  if (problem) return { problem };
  let scope = 'global';
  let rest = rel;
  const parts = rel.split('/');
  const kind = SCOPE_FOLDERS[parts[0] ?? ''];
  if (kind && parts.length > 1) {
    const slug = parts[1] ?? '';
    if (parts.length < 3) return { problem: `"${rel}" is inside ${parts[0]}/ but not inside a ${kind} folder` };
    if (!SLUG.test(slug)) return { problem: `${kind} folder "${slug}" is not a valid scope slug (letters, digits, . _ -)` };
    scope = `${kind}:${slug}`;
    rest = parts.slice(2).join('/');
  }
  const daily = DAILY.exec(rest);
  if (daily) return { scope, kind: 'daily', day: daily[1] as string };
  if (rest.startsWith(`${HISTORY_FOLDER}/`)) return { scope, kind: 'history' };
  return { scope, kind: 'note' };
}

/** Refuses what could escape the vault or is not a Markdown note; paths use forward slashes. */
export function relPathProblem(rel: string): string | undefined {
  if (!rel) return 'the path is empty';
  if (rel.length > 500) return `the path is ${rel.length} characters, over 500`;
  if (rel.includes('\\') || rel.startsWith('/') || /^[A-Za-z]:/.test(rel)) return `"${rel.slice(0, 120)}" is not a vault-relative path with forward slashes`;
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return `"${rel.slice(0, 120)}" has an empty, "." or ".." segment`;
  if (parts.some((p) => p.startsWith('.'))) return `"${rel.slice(0, 120)}" is inside a hidden folder`;
  if (!rel.endsWith('.md')) return `"${rel.slice(0, 120)}" is not a .md file`;
  return undefined;
}

export function absolutePath(root: string, rel: string): string {
  return path.join(root, ...rel.split('/'));
}

export interface ListedFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * Every Markdown file in the vault with its size and modification time. Synchronous on
 * purpose: it runs inside reads that must stay synchronous (search_text) and, at the sizes a
 * vault reaches, a stat per file costs microseconds.
 */
export function listVaultFiles(root: string): ListedFile[] {
  const out: ListedFile[] = [];
  const walk = (dir: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) walk(abs, childRel);
      else if (e.isFile() && e.name.endsWith('.md')) {
        try {
          const st = fs.statSync(abs);
          out.push({ path: childRel, size: st.size, mtimeMs: st.mtimeMs });
        } catch {
          // Deleted between readdir and stat: it is simply not there.
        }
      }
    }
  };
  walk(root, '');
  return out;
}

/** Does any promoted-history folder exist (global or in a project)? */
export function historyFolders(root: string): string[] {
  const found: string[] = [];
  if (isDir(path.join(root, HISTORY_FOLDER))) found.push(HISTORY_FOLDER);
  let projects: string[] = [];
  try {
    projects = fs.readdirSync(path.join(root, PROJECTS));
  } catch {
    projects = [];
  }
  for (const slug of projects.sort()) {
    if (SLUG.test(slug) && isDir(path.join(root, PROJECTS, slug, HISTORY_FOLDER))) found.push(`${PROJECTS}/${slug}/${HISTORY_FOLDER}`);
  }
  return found;
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
