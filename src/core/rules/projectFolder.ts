import * as fs from 'node:fs';
import * as path from 'node:path';
import { nameProblem } from '../text/textRules';

/**
 * What a rule's `project` may be: the absolute path of a folder on this machine, as the caller's
 * workspace is. A relative path would be resolved against whatever folder the server runs in,
 * and a made-up one files a rule no workspace ever matches; both are refused, saying which.
 */
export function projectFolderProblem(project: string): string | undefined {
  const text = nameProblem('project', project);
  if (text) return text;
  if (!path.isAbsolute(project)) return `project "${project.slice(0, 200)}" is not an absolute path; pass the project folder as a full path (the default is the caller's workspace)`;
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(project);
  } catch {
    stat = undefined;
  }
  if (!stat) return `project "${project.slice(0, 200)}" does not exist on this machine; pass an existing project folder (the default is the caller's workspace)`;
  if (!stat.isDirectory()) return `project "${project.slice(0, 200)}" is a file, not a folder; pass the project folder`;
  return undefined;
}
