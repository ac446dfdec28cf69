import { Conditions, queryRows, type Database, type SqlValue } from '../../store/sqlite';
import { normalizeKey } from '../../text/textRules';
import { iso } from '../../text/time';
import { parseList } from './jsonList';

/** Predicates whose object is another name for the subject (normalised keys). */
export const ALIAS_PREDICATES = ['alias', 'aliases', 'aka', 'a.k.a.', 'also known as', 'nickname', 'known as', 'short name', 'full name'];
const MAX_ENTITIES = 10;
const FACTS_PER_ENTITY = 20;

type Match = 'name' | 'alias' | 'path' | 'partial';

interface Entity {
  name: string;
  key: string;
  match: Match;
  scopes: Set<string>;
  aliases: Set<string>;
  notes: Map<string, { id: string; title: string; scope: string }>;
}

/**
 * lookup_entity: a person, project or concept by name or alias. What it matches: fact subjects,
 * aliases (facts whose predicate says "alias"/"aka", and `aliases:` in a note's front matter),
 * note titles and note paths. Never the words inside a note — that is search_text's job, and
 * keeping it out is what makes a name lookup precise.
 */
export function lookupEntity(db: Database, name: string, scope: string | undefined) {
  const key = normalizeKey(name);
  const entities = new Map<string, Entity>();
  const entity = (display: string, match: Match): Entity => {
    const k = normalizeKey(display);
    let e = entities.get(k);
    if (!e) entities.set(k, (e = { name: display, key: k, match, scopes: new Set(), aliases: new Set(), notes: new Map() }));
    else if (rank(match) < rank(e.match)) e.match = match;
    return e;
  };
  const inScope = (s: string) => scope === undefined || s === scope;

  // Fact subjects, exactly, then as a word prefix when nothing matched exactly.
  for (const exact of [true, false]) {
    const where = exact ? new Conditions('subject_key = ?', key) : new Conditions('(subject_key LIKE ? ESCAPE \'\\\' OR subject_key LIKE ? ESCAPE \'\\\')', `${like(key)}%`, `% ${like(key)}%`);
    where.add('retired_at IS NULL').addIf(scope, 'scope = ?');
    const rows = queryRows(db, `SELECT subject, subject_key, scope FROM facts WHERE ${where.sql} GROUP BY subject_key, scope ORDER BY max(recorded_at) DESC LIMIT 50`, where.params);
    for (const r of rows) entity(String(r.subject), exact ? 'name' : 'partial').scopes.add(String(r.scope));
    if (exact && rows.length) break;
  }
  // Aliases from facts: every value ever given, current or not — an old name still names it.
  const aliasRows = queryRows(
    db,
    `SELECT subject, object, scope FROM facts WHERE predicate_key IN (${ALIAS_PREDICATES.map(() => '?').join(',')}) AND retired_at IS NULL`,
    ALIAS_PREDICATES,
  );
  for (const r of aliasRows) {
    if (!inScope(String(r.scope))) continue;
    const subject = String(r.subject);
    const alias = String(r.object);
    const hit = normalizeKey(alias) === key ? 'alias' : normalizeKey(subject) === key ? 'name' : undefined;
    if (hit || entities.has(normalizeKey(subject))) {
      const e = entity(subject, hit ?? 'name');
      e.aliases.add(alias);
      e.scopes.add(String(r.scope));
    }
  }
  // Notes: by title, front-matter alias, file name or path.
  const noteWhere = new Conditions('retired_at IS NULL').add("kind != 'daily'").addIf(scope, 'scope = ?');
  for (const r of queryRows(db, `SELECT path, scope, title, aliases FROM vault_files WHERE ${noteWhere.sql}`, noteWhere.params)) {
    const path = String(r.path);
    const title = r.title === null ? stem(path) : String(r.title);
    const aliases = parseList(r.aliases);
    const pathKey = normalizeKey(path.replace(/\.md$/, '').replace(/[-_/]+/g, ' '));
    let match: Match | undefined;
    if (normalizeKey(title) === key || normalizeKey(stem(path).replace(/[-_]+/g, ' ')) === key) match = 'name';
    else if (aliases.some((a) => normalizeKey(a) === key)) match = 'alias';
    else if (path === name || ` ${pathKey} `.includes(` ${key} `)) match = 'path';
    else if (` ${normalizeKey(title)} `.includes(` ${key} `)) match = 'partial';
    if (!match) continue;
    const e = entity(title, match);
    e.scopes.add(String(r.scope));
    for (const a of aliases) e.aliases.add(a);
    e.notes.set(path, { id: `note:${path}`, title, scope: String(r.scope) });
  }

  const list = [...entities.values()].sort((a, b) => rank(a.match) - rank(b.match) || a.name.localeCompare(b.name)).slice(0, MAX_ENTITIES);
  const out = list.map((e) => {
    const facts = queryRows(
      db,
      `SELECT id, predicate, object, scope, recorded_at, coalesce(valid_from, recorded_at) AS vf FROM facts
        WHERE subject_key = ? AND superseded_at IS NULL AND retired_at IS NULL ${scope ? 'AND scope = ?' : ''} ORDER BY recorded_at DESC LIMIT ?`,
      [e.key, ...(scope ? [scope] : []), FACTS_PER_ENTITY + 1] as SqlValue[],
    );
    return {
      name: e.name,
      match: e.match,
      scopes: [...e.scopes].sort(),
      aliases: [...e.aliases].filter((a) => normalizeKey(a) !== e.key).sort(),
      facts: facts.slice(0, FACTS_PER_ENTITY).map((f) => ({
        id: `fact:${String(f.id)}`,
        predicate: String(f.predicate),
        object: String(f.object),
        scope: String(f.scope),
        valid_from: iso(Number(f.vf)),
        recorded_at: iso(Number(f.recorded_at)),
      })),
      ...(facts.length > FACTS_PER_ENTITY ? { more_facts: true } : {}),
      notes: [...e.notes.values()],
    };
  });
  return {
    ok: true as const,
    name,
    entities: out,
    count: out.length,
    ...(entities.size > out.length ? { more: entities.size - out.length } : {}),
    ...(out.length ? {} : { note: `nothing is named "${name.slice(0, 80)}"${scope ? ` in ${scope}` : ''}: lookup_entity matches names, aliases and note paths, not words inside notes (search_text finds those)` }),
  };
}

function rank(m: Match): number {
  return { name: 0, alias: 1, path: 2, partial: 3 }[m];
}

function stem(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/\.md$/, '');
}

function like(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
