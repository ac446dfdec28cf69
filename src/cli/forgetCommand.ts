import * as path from 'node:path';
import type { ForgetScope } from '../core/history/forgetOps';
import { isRefusal } from '../core/refusal';
import type { ForgetService } from '../core/history/forgetService';
import type { Remote } from '../core/owner/serviceProxy';

export const FORGET_USAGE = `recollect forget --session <id> | --workspace <folder> | --before <date>
  removes imported sessions from every index, summary, chapter and blob, and from the
  journal and snapshot on disk; a forgotten session is not imported again
recollect forget --list                      the forgotten sessions
recollect forget --remember <id>...          import these again (the next import reads their files)
recollect forget --tool-outputs-before <date> [--source <name>]...
  drops the text of raw tool outputs older than the date; events and summaries stay`;

/** What the command line asks for, or why it cannot be read. */
export type ForgetRequest =
  | { kind: 'forget'; scope: ForgetScope }
  | { kind: 'list' }
  | { kind: 'remember'; ids: string[] }
  | { kind: 'outputs'; before: number; sources: string[] | null }
  | { kind: 'usage'; reason: string };

export function parseForgetArgs(args: readonly string[], cwd = process.cwd()): ForgetRequest {
  const [flag, value, ...more] = args;
  const date = (text: string | undefined) => {
    const t = text === undefined ? NaN : Date.parse(text);
    return Number.isFinite(t) ? t : undefined;
  };
  switch (flag) {
    case '--session':
      return value && !more.length ? { kind: 'forget', scope: { session: value } } : usage('--session takes one session id');
    case '--workspace':
      return value && !more.length ? { kind: 'forget', scope: { workspace: path.resolve(cwd, value) } } : usage('--workspace takes one folder');
    case '--before': {
      const t = date(value);
      return t !== undefined && !more.length ? { kind: 'forget', scope: { before: t } } : usage(`--before takes a date or ISO time (e.g. 2026-01-31), not "${value ?? ''}"`);
    }
    case '--list':
      return value === undefined ? { kind: 'list' } : usage('--list takes nothing');
    case '--remember':
      return value ? { kind: 'remember', ids: [value, ...more] } : usage('--remember takes one or more session ids');
    case '--tool-outputs-before': {
      const t = date(value);
      if (t === undefined) return usage(`--tool-outputs-before takes a date or ISO time, not "${value ?? ''}"`);
      const sources: string[] = [];
      for (let i = 0; i < more.length; i += 2) {
        if (more[i] !== '--source' || !more[i + 1]) return usage('after the date, only --source <name> may follow');
        sources.push(more[i + 1] as string);
      }
      return { kind: 'outputs', before: t, sources: sources.length ? sources : null };
    }
    default:
      return usage(flag === undefined ? 'say what to forget' : `unknown option "${flag}"`);
  }
}

function usage(reason: string): ForgetRequest {
  return { kind: 'usage', reason };
}

/** Runs a parsed request (here or at the store's owner) and prints its JSON answer; true when it was carried out (a refusal is false). */
export async function runForget(services: { forget: Remote<Pick<ForgetService, 'forget' | 'forgotten' | 'remember' | 'dropToolOutputs'>> }, request: Exclude<ForgetRequest, { kind: 'usage' }>, print: (text: string) => void): Promise<boolean> {
  let answer: object;
  switch (request.kind) {
    case 'forget':
      answer = await services.forget.forget(request.scope);
      break;
    case 'list':
      answer = { ok: true, forgotten: await services.forget.forgotten() };
      break;
    case 'remember':
      answer = await services.forget.remember(request.ids);
      break;
    case 'outputs':
      answer = await services.forget.dropToolOutputs(request.before, request.sources);
      break;
  }
  print(JSON.stringify(answer, null, 2) + '\n');
  return !isRefusal(answer);
}
