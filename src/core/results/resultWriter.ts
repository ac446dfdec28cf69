import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { refuse, type Refusal } from '../refusal';
import { checkHtml } from './htmlCheck';
import { bytesFree } from '../store/fileWrites';

export type ResultFormat = 'md' | 'html';

export interface WriteResultInput {
  content: string;
  format?: ResultFormat | undefined;
}

export interface WriteReceipt {
  ok: true;
  path: string;
  bytes: number;
  format: ResultFormat;
  /** Which rule picked the folder, so the agent can tell the person where to look and why. */
  folder: 'configured' | 'downloads' | 'fallback';
}

/** A refused page: `reason` lists every problem; `problems` holds them one by one. */
export interface PageRefusal extends Refusal {
  problems?: string[];
  /** Set when the document structure itself is missing: the tool adds the html_render rules. */
  incomplete_document?: boolean;
}

export interface ResultWriterOptions {
  /** The person's chosen folder (VS Code: `recollect.outputDirectory`); read on each write so a changed setting applies at once. */
  outputDirectory?: string | (() => string | undefined) | undefined;
  /** Used when nothing is configured and there is no Downloads folder: the extension's storage, or `<store home>/results`. */
  fallbackDirectory: string;
  /** Defaults to `~/Downloads`; tests point it elsewhere. */
  downloadsDirectory?: string | undefined;
  now?: () => number;
}

/** What the tool sees, so a host could route deliverables elsewhere. */
export interface ResultSink {
  write(input: WriteResultInput): Promise<WriteReceipt | PageRefusal>;
}

/**
 * A deliverable is read by people, not streamed into a model; past this it is almost surely a
 * mistake. Below the MCP server's request bound (MAX_REQUEST_BYTES), so content this long still
 * fits in one request when JSON escaping lengthens it by a quarter (newlines, quotes).
 */
export const RESULT_MAX_BYTES = 8 * 1024 * 1024;
const MAX_SUFFIX = 1000;

/**
 * Saves one finished deliverable as a new file and never touches an existing one. HTML pages
 * are checked first and refused with every problem listed, so a broken page is never left
 * behind for a person to open.
 */
export class ResultWriter implements ResultSink {
  constructor(private readonly options: ResultWriterOptions) {}

  async write(input: WriteResultInput): Promise<WriteReceipt | PageRefusal> {
    const format = input.format ?? 'md';
    const bytes = Buffer.byteLength(input.content, 'utf8');
    if (bytes > RESULT_MAX_BYTES) {
      return refuse(`content is ${bytes} bytes, over the ${RESULT_MAX_BYTES}-byte limit for one result. Nothing was written.`, { limit: RESULT_MAX_BYTES, used: bytes, unit: 'bytes' });
    }
    if (format === 'html') {
      const check = checkHtml(input.content);
      if (check.problems.length) {
        const list = check.problems.map((p, i) => `${i + 1}. ${p}`).join('\n');
        return {
          ...refuse(`the page was not written: ${check.problems.length} problem${check.problems.length > 1 ? 's' : ''} to fix, then call write_result again.\n${list}`),
          problems: check.problems,
          ...(check.incomplete ? { incomplete_document: true } : {}),
        };
      }
    }
    const target = this.folder();
    if ('reason' in target) return target;
    const file = await saveNew(target.dir, stamp(this.options.now?.() ?? Date.now()), `.${format}`, input.content);
    if (typeof file !== 'string') return file;
    return { ok: true, path: file, bytes, format, folder: target.folder };
  }

  private folder(): { dir: string; folder: WriteReceipt['folder'] } | Refusal {
    const setting = typeof this.options.outputDirectory === 'function' ? this.options.outputDirectory() : this.options.outputDirectory;
    if (setting?.trim()) {
      const dir = expandHome(setting.trim());
      if (!path.isAbsolute(dir)) return refuse(`the configured output directory "${setting}" is not an absolute path; set recollect.outputDirectory to a full path. Nothing was written.`);
      // The person named this folder, so creating it is what they asked for.
      const made = ensureDir(dir);
      return made ?? { dir, folder: 'configured' };
    }
    const downloads = this.options.downloadsDirectory ?? path.join(os.homedir(), 'Downloads');
    if (isDirectory(downloads)) return { dir: downloads, folder: 'downloads' };
    const made = ensureDir(this.options.fallbackDirectory);
    return made ?? { dir: this.options.fallbackDirectory, folder: 'fallback' };
  }
}

/**
 * Writes to a temp file in the target folder, syncs it, then links it under the first free
 * name. A hard link fails with EEXIST instead of replacing, so two writers in the same second
 * both keep their file; rename would silently overwrite. Where links are unsupported (some
 * network and FAT volumes) it falls back to check-then-rename.
 */
async function saveNew(dir: string, base: string, ext: string, content: string): Promise<string | Refusal> {
  const temp = path.join(dir, `.${base}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await fs.promises.open(temp, 'wx');
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    for (let n = 1; n <= MAX_SUFFIX; n++) {
      const file = path.join(dir, `${base}${n > 1 ? `-${n}` : ''}${ext}`);
      try {
        await fs.promises.link(temp, file);
        return file;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') continue;
        if (!['EPERM', 'ENOTSUP', 'EXDEV', 'ENOSYS', 'EOPNOTSUPP'].includes(code ?? '')) throw err;
        if (fs.existsSync(file)) continue;
        await fs.promises.rename(temp, file);
        return file;
      }
    }
    return refuse(`${MAX_SUFFIX} reports named ${base} already exist in ${dir}. Nothing was written.`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      // writeFile wrote what fitted before the error; the temp file goes in `finally`.
      const needed = Buffer.byteLength(content, 'utf8');
      const free = bytesFree(dir) ?? 0;
      return refuse(`the disk is full: the ${needed}-byte result does not fit in ${dir} (${free} bytes free on that disk). Nothing was written; free some space, or set recollect.outputDirectory to a folder on another disk, and try again.`, { limit: free, used: needed, unit: 'bytes' });
    }
    return refuse(`could not write in ${dir}: ${(err as Error).message}. Nothing was written.`);
  } finally {
    await fs.promises.rm(temp, { force: true });
  }
}

/** report-YYYYMMDD-HHMMSS in local time, because the person finds the file by the clock on their wall. */
export function stamp(at: number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, '0');
  return `report-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

function expandHome(dir: string): string {
  if (dir === '~') return os.homedir();
  return /^~[/\\]/.test(dir) ? path.join(os.homedir(), dir.slice(2)) : dir;
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function ensureDir(dir: string): Refusal | undefined {
  try {
    fs.mkdirSync(dir, { recursive: true });
    return undefined;
  } catch (err) {
    return refuse(`the output directory ${dir} cannot be created: ${(err as Error).message}. Nothing was written.`);
  }
}
