import * as os from 'node:os';

/**
 * `recollect.history.exclude`: globs over absolute paths (forward slashes) of transcript files
 * and folders that are never imported. `*` and `?` stay within one path segment, `**` spans any
 * number of them, `{a,b}` is either; `~` at the start is the home folder; a pattern that is not
 * anchored (`/`, `~`, a drive letter or `**`) matches at any depth. A folder that matches keeps
 * everything below it out.
 */
export class ExcludeGlobs {
  private readonly patterns: RegExp[];

  constructor(globs: readonly string[], home = os.homedir()) {
    this.patterns = globs.map((g) => g.trim()).filter(Boolean).map((g) => globRegExp(anchored(g, home)));
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  /** Whether the file or folder, or a folder above it, is excluded. */
  excludes(absolutePath: string): boolean {
    if (!this.patterns.length) return false;
    const p = absolutePath.replace(/\\/g, '/');
    const prefixes: string[] = [];
    for (let i = p.indexOf('/', 1); i !== -1; i = p.indexOf('/', i + 1)) prefixes.push(p.slice(0, i));
    prefixes.push(p);
    return prefixes.some((q) => this.patterns.some((re) => re.test(q)));
  }
}

function anchored(glob: string, home: string): string {
  let g = glob.replace(/\\/g, '/');
  if (g === '~' || g.startsWith('~/')) g = home.replace(/\\/g, '/') + g.slice(1);
  if (!g.startsWith('/') && !g.startsWith('**') && !/^[A-Za-z]:\//.test(g)) g = `**/${g}`;
  return g.replace(/\/+$/, '');
}

function globRegExp(glob: string): RegExp {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` is zero or more whole segments; a trailing `**` is anything below.
      if (glob[i + 2] === '/') {
        out += '(?:[^/]*/)*';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  // Paths differ only in case on Windows and (by default) macOS file systems.
  return new RegExp(`^${out}$`, process.platform === 'win32' || process.platform === 'darwin' ? 'i' : '');
}
