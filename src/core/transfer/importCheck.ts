import { parseFrontMatter } from '../memory/vault/frontMatter';
import { relPathProblem } from '../memory/vault/vaultLayout';
import { refuse, type Refusal } from '../refusal';
import { textProblem } from '../text/textRules';
import { iso } from '../text/time';
import type { StagedFile } from './transferSchema';

export const IMPORT_MAX_FILES = 100;
export const IMPORT_FILE_MAX_BYTES = 64 * 1024;
export const IMPORT_BATCH_MAX_BYTES = 128 * 1024;
export const IMPORT_FOLDER = 'Imported';

export interface ImportFileInput {
  relativePath: string;
  markdown: string;
}

export interface PreviewInput {
  label: string;
  files: ImportFileInput[];
  include?: string[] | undefined;
  exclude?: string[] | undefined;
}

export interface CheckedBatch {
  files: StagedFile[];
  excluded: string[];
  bytes: number;
  /** Front-matter dates later than the write time: the index uses the write time instead. */
  clamped: { index: number; path: string; claimed: string; clamped_to: string }[];
}

/**
 * The whole-call checks of preview_import. Any bad file refuses the call and names its index in
 * `files`: a partial import would leave a person reconciling which half arrived.
 */
export function checkBatch(input: PreviewInput, now: number): CheckedBatch | Refusal {
  const labelProblem = textProblem('label', input.label) ?? segmentProblem(input.label);
  if (labelProblem) return refuse(`${labelProblem}. Nothing was staged.`);
  if (input.files.length > IMPORT_MAX_FILES) {
    return refuse(`${input.files.length} files were sent; one call takes at most ${IMPORT_MAX_FILES}. Split them into several imports. Nothing was staged.`, {
      limit: IMPORT_MAX_FILES, used: input.files.length, unit: 'items',
    });
  }
  const seen = new Map<string, number>();
  for (const [i, f] of input.files.entries()) {
    const bad = textProblem(`files[${i}].markdown (${f.relativePath.slice(0, 120)})`, f.markdown) ?? textProblem(`files[${i}].relativePath`, f.relativePath);
    if (bad) return refuse(`${bad}. One bad file refuses the whole call: send it again without files[${i}], or with it corrected. Nothing was staged.`);
    const pathBad = relPathProblem(f.relativePath);
    if (pathBad) return refuse(`files[${i}]: ${pathBad}; only .md files with relative forward-slash paths are imported. Nothing was staged.`);
    const bytes = Buffer.byteLength(f.markdown, 'utf8');
    if (bytes > IMPORT_FILE_MAX_BYTES) {
      return refuse(`files[${i}] (${f.relativePath.slice(0, 120)}) is ${bytes} bytes; a file may be at most ${IMPORT_FILE_MAX_BYTES}. Split it. Nothing was staged.`, {
        limit: IMPORT_FILE_MAX_BYTES, used: bytes, unit: 'bytes',
      });
    }
    const dup = seen.get(f.relativePath);
    if (dup !== undefined) return refuse(`files[${i}] has the same relativePath as files[${dup}] (${f.relativePath.slice(0, 120)}). Nothing was staged.`);
    seen.set(f.relativePath, i);
  }
  const picked = input.files.map((f, index) => ({ ...f, index })).filter((f) => wanted(f.relativePath, input.include, input.exclude));
  const excluded = input.files.filter((f) => !wanted(f.relativePath, input.include, input.exclude)).map((f) => f.relativePath);
  const bytes = picked.reduce((n, f) => n + Buffer.byteLength(f.markdown, 'utf8'), 0);
  if (bytes > IMPORT_BATCH_MAX_BYTES) {
    return refuse(`the files to import hold ${bytes} bytes together; one batch may hold at most ${IMPORT_BATCH_MAX_BYTES}. Split them into several imports. Nothing was staged.`, {
      limit: IMPORT_BATCH_MAX_BYTES, used: bytes, unit: 'bytes',
    });
  }
  if (!picked.length) return refuse(`no file is left to import after include/exclude (${input.files.length} sent, ${excluded.length} left out). Nothing was staged.`);
  const clamped: CheckedBatch['clamped'] = [];
  for (const f of picked) {
    const date = parseFrontMatter(f.markdown).date;
    if (date !== undefined && date > now) clamped.push({ index: f.index, path: f.relativePath, claimed: iso(date), clamped_to: iso(now) });
  }
  const files = picked.map((f) => ({ index: f.index, relativePath: f.relativePath, target: `${IMPORT_FOLDER}/${input.label}/${f.relativePath}`, markdown: f.markdown }));
  for (const f of files) {
    const targetBad = relPathProblem(f.target);
    if (targetBad) return refuse(`files[${f.index}]: ${targetBad}. Nothing was staged.`);
  }
  return { files, excluded, bytes, clamped };
}

/** A label becomes one folder name, so it cannot hold separators or be a hidden folder. */
function segmentProblem(label: string): string | undefined {
  if (!label.trim()) return 'label is only whitespace';
  if (/[\\/]/.test(label)) return `label "${label.slice(0, 80)}" holds a path separator; it names one folder, Imported/<label>/`;
  if (label.startsWith('.')) return `label "${label.slice(0, 80)}" starts with "."; such folders are never read`;
  return undefined;
}

function matches(path: string, prefix: string): boolean {
  const p = prefix.replace(/^\.\//, '');
  return path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`) || (p.endsWith('.md') && path === p);
}

function wanted(path: string, include: string[] | undefined, exclude: string[] | undefined): boolean {
  if (include?.length && !include.some((p) => matches(path, p))) return false;
  return !exclude?.some((p) => matches(path, p));
}
