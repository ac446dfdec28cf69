import * as fs from 'node:fs';
import * as path from 'node:path';
import { refuse, type Refusal } from '../refusal';
import { countTokens } from '../text/tokens';
import { BUILTIN_GUIDES, BUILTIN_TOPICS, TOPIC_ALIASES, type BuiltinTopic } from './builtinGuides';

/** A person's guide file name doubles as its topic, so it must be a plain identifier. */
const TOPIC_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** First line of a person's guide that drops the built-in text for that topic instead of extending it. */
const REPLACE_MARKER = /^\s*<!--\s*replace\s*-->\s*(\r?\n|$)/i;
/** A guide is read into a model's context on every call; a runaway file must not flood it. */
export const GUIDE_MAX_BYTES = 64 * 1024;

export interface GuideResult {
  ok: true;
  topics: string[];
  guide: string;
  /** Where each topic's text came from: "builtin" and/or the person's files, in the order joined. */
  sources: Record<string, string[]>;
  tokens: number;
  note?: string;
}

/** What tools see, so a host can substitute its own guide source. */
export interface GuideSource {
  topics(): string[];
  get(topics: readonly string[]): GuideResult | Refusal;
}

/**
 * Built-in rule sets plus the ones a person keeps as `<topic>.md` in guide folders (for example
 * `<workspace>/.recollect/guides/`). A person's file extends the built-in guide, because the
 * usual wish is "also do this here", not "forget the basics"; starting the file with
 * `<!-- replace -->` drops the built-in text instead. Files are read on every call so an edit
 * takes effect at once, without a reload.
 */
export class GuideService implements GuideSource {
  constructor(private readonly folders: readonly string[] = []) {}

  /** Every topic that can be asked for right now: built-in ones first, then a person's own. */
  topics(): string[] {
    const own = new Set<string>();
    for (const folder of this.folders) {
      for (const name of listMarkdown(folder)) {
        const topic = name.slice(0, -3);
        if (TOPIC_NAME.test(topic) && !(BUILTIN_TOPICS as readonly string[]).includes(topic)) own.add(topic);
      }
    }
    return [...BUILTIN_TOPICS, ...[...own].sort()];
  }

  get(requested: readonly string[]): GuideResult | Refusal {
    const known = this.topics();
    const wanted: string[] = [];
    const renamed: string[] = [];
    for (const raw of requested) {
      const asked = raw.trim();
      const topic = TOPIC_ALIASES[asked] ?? asked;
      if (topic !== asked) renamed.push(`${asked} is now ${topic}`);
      if (!wanted.includes(topic)) wanted.push(topic);
    }
    const unknown = wanted.filter((t) => !known.includes(t));
    if (unknown.length) {
      return refuse(`unknown topic${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => `"${t.slice(0, 64)}"`).join(', ')}. Known topics: ${known.join(', ')}.`);
    }

    const sections: string[] = [];
    const sources: Record<string, string[]> = {};
    const skipped: string[] = [];
    for (const topic of wanted) {
      const own = this.personGuides(topic, skipped);
      const replaces = own.some((g) => g.replaces);
      const parts: string[] = [];
      const from: string[] = [];
      const builtin = BUILTIN_GUIDES[topic as BuiltinTopic] as string | undefined;
      if (builtin !== undefined && !replaces) {
        parts.push(builtin);
        from.push('builtin');
      }
      for (const g of own) {
        parts.push(g.text);
        from.push(g.file);
      }
      sections.push(`## ${topic}\n\n${parts.join('\n\n')}`);
      sources[topic] = from;
    }
    const guide = sections.join('\n\n');
    const notes = [...renamed, ...skipped];
    return { ok: true, topics: wanted, guide, sources, tokens: countTokens(guide), ...(notes.length ? { note: notes.join('; ') } : {}) };
  }

  private personGuides(topic: string, skipped: string[]): { file: string; text: string; replaces: boolean }[] {
    const out: { file: string; text: string; replaces: boolean }[] = [];
    for (const folder of this.folders) {
      const file = path.join(folder, `${topic}.md`);
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        continue;
      }
      if (!stat.isFile()) continue;
      if (stat.size > GUIDE_MAX_BYTES) {
        skipped.push(`${file} was left out: ${stat.size} bytes, over the ${GUIDE_MAX_BYTES}-byte guide limit`);
        continue;
      }
      const raw = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
      const replaces = REPLACE_MARKER.test(raw);
      const text = (replaces ? raw.replace(REPLACE_MARKER, '') : raw).trim();
      if (text || replaces) out.push({ file, text, replaces });
    }
    return out;
  }
}

function listMarkdown(folder: string): string[] {
  try {
    return fs.readdirSync(folder).filter((n) => n.endsWith('.md'));
  } catch {
    // A guide folder that does not exist yet is the normal case, not an error.
    return [];
  }
}
