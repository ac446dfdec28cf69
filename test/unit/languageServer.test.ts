import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompletionList, Hover, Location, MarkupContent } from 'vscode-languageserver/node';
import { isRefusal } from '../../src/core/refusal';
import type { Services } from '../../src/core/services';
import { vaultRoot } from '../../src/core/memory/vault/vaultLayout';
import { STORE_CHANGED } from '../../src/server/protocol';
import { startNotesServer, type NotesServer } from './helpers/lspClient';
import { openTemp } from './helpers/tempStore';

let services: Services;
let server: NotesServer;
let vault: string;
const ids = { oldFact: '', currentFact: '', deployFact: '', deployEntry: '', entry: '', entryDay: '', entryText: 'The deploy window moved to Friday afternoons', hostileFact: '' };

function ok<T extends object>(r: T): Exclude<T, { ok: false }> {
  if (isRefusal(r)) throw new Error(`refused: ${r.reason}`);
  return r as Exclude<T, { ok: false }>;
}

function write(rel: string, text: string): string {
  const file = path.join(vault, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

function position(text: string, marker: string, offset = marker.length) {
  const at = text.indexOf(marker);
  if (at === -1) throw new Error(`marker ${marker} not in text`);
  const before = text.slice(0, at + offset).split('\n');
  return { line: before.length - 1, character: before[before.length - 1]!.length };
}

async function complete(uri: string, text: string, marker: string, offset?: number): Promise<CompletionList> {
  return server.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: position(text, marker, offset) });
}

async function hover(uri: string, text: string, marker: string, offset?: number): Promise<string | undefined> {
  const h: Hover | null = await server.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: position(text, marker, offset) });
  return h ? (h.contents as MarkupContent).value : undefined;
}

beforeAll(async () => {
  services = await openTemp();
  vault = vaultRoot(services.store.home);
  const client = 'test';
  ids.oldFact = ok(await services.memory.saveFact({ subject: 'build tool', predicate: 'is', object: 'Vite 8' }, client)).id;
  ids.currentFact = ok(await services.memory.saveFact({ subject: 'Build Tool', predicate: 'is', object: 'Vite 9' }, client)).id;
  const deploy = ok(await services.memory.remember({ statement: ids.entryText, subject: 'deploy day', predicate: 'scheduled on', object: 'Friday' }, client));
  ids.deployFact = deploy.id;
  ids.deployEntry = 'note_id' in deploy && deploy.note_id ? deploy.note_id : '';
  ids.hostileFact = ok(await services.memory.saveFact({ subject: 'hostile', predicate: 'says', object: '[click me](command:workbench.action.quit) <img src=x onerror=alert(1)> **bold**' }, client)).id;
  const note = ok(await services.memory.remember({ statement: 'Standup is at 9:30' }, client));
  if (!('day' in note)) throw new Error('expected a note');
  ids.entry = note.id;
  ids.entryDay = note.day;
  // The vault writer may already have written the day file; if not, write it as it would.
  const dayFile = path.join(vault, 'daily', `${ids.entryDay}.md`);
  if (!fs.existsSync(dayFile)) write(`daily/${ids.entryDay}.md`, `# ${ids.entryDay}\n\n- 09:00 ${ids.entryText}\n- 09:01 Standup is at 9:30\n`);
  server = await startNotesServer(services);
});

afterAll(async () => {
  await server?.close();
  services?.store.close();
});

describe('notes language server over LSP (host side: a stand-in for the extension host, answering from a real store)', () => {
  it('completes fact, entry and note ids after their prefix', async () => {
    const text = 'See fact: and fact:\nand entry:\nand note:d\n';
    const uri = server.open(write('notes/ids.md', text));
    const facts = await complete(uri, text, 'fact:\n', 'fact:'.length);
    const factLabels = facts.items.map((i) => i.label);
    // Only current values are offered: the superseded Vite 8 fact is history.
    expect(factLabels).toContain(ids.currentFact);
    expect(factLabels).toContain(ids.deployFact);
    expect(factLabels).not.toContain(ids.oldFact);
    const item = facts.items.find((i) => i.label === ids.currentFact);
    expect(item?.detail).toContain('Vite 9');
    expect(item?.textEdit).toMatchObject({ newText: ids.currentFact, range: { start: { line: 0, character: 14 }, end: { line: 0, character: 19 } } });

    const entries = await complete(uri, text, 'entry:');
    expect(entries.items.map((i) => i.label)).toContain(ids.entry);
    const notes = await complete(uri, text, 'note:d');
    expect(notes.items.map((i) => i.label)).toEqual([`note:daily/${ids.entryDay}.md`]);
  });

  it('completes entity names inside [[ ]] and in front matter, predicates by word', async () => {
    const text = '---\nsubject: dep\npredicate: sch\n---\nLinks: [[bui\nand sch\n';
    const uri = server.open(write('notes/names.md', text));
    const link = await complete(uri, text, '[[bui');
    expect(link.items.map((i) => i.label)).toEqual(['Build Tool']);
    expect(link.items[0]?.detail).toBe('entity · 2 facts');
    const subject = await complete(uri, text, 'subject: dep');
    expect(subject.items.map((i) => i.label)).toEqual(['deploy day']);
    const predicate = await complete(uri, text, 'predicate: sch');
    expect(predicate.items.map((i) => i.label)).toEqual(['scheduled on']);
    const word = await complete(uri, text, 'and sch');
    expect(word.items.map((i) => `${i.label}/${i.kind}`)).toEqual(['scheduled on/10']);
  });

  it('hovers a subject with its current value and history', async () => {
    const text = 'The build tool of this repo matters.\n';
    const uri = server.open(write('notes/hover.md', text));
    const md = await hover(uri, text, 'build', 2);
    expect(md).toBeDefined();
    expect(md).toContain('**Build Tool**');
    expect(md).toContain('1 current value, 1 earlier value');
    expect(md).toContain('Vite 9');
    expect(md).toMatch(/History:[\s\S]*~~Vite 8~~/);
    expect(await hover(uri, text, 'matters', 1)).toBeUndefined();
  });

  it('hovers a fact id, marking a superseded one, and keeps hostile text inert', async () => {
    const text = `Old: ${ids.oldFact}\nBad: ${ids.hostileFact}\n`;
    const uri = server.open(write('notes/hover-ids.md', text));
    const md = await hover(uri, text, ids.oldFact, 3);
    expect(md).toContain('is no longer current');
    expect(md).toMatch(/~~Vite 8~~ ◀/);
    const hostile = await hover(uri, text, ids.hostileFact, 3);
    expect(hostile).toContain('\\[click me\\]\\(command\\:workbench\\.action\\.quit\\)');
    expect(hostile).toContain('\\<img src=x onerror=alert\\(1\\)\\>');
    expect(hostile).not.toMatch(/[^\\]\[click me\]/);
  });

  it('marks what the store would refuse in a real file, and nothing else', async () => {
    const long = 'y'.repeat(4001);
    // The store reads session_date before date, with a lenient date parser; the mark follows what it reads.
    const text = `---\ndate: 2020-01-01\nsession_date: "March 3, 2999"\n---\nA bell \u0007 here.\n${long}\n${'z'.repeat(4000)}\nKnown ${ids.currentFact}, unknown fact:nosuchfact0000, note:daily/${ids.entryDay}.md, note:missing.md\n`;
    const file = write('notes/problems.md', text);
    const uri = pathToFileURL(file).href;
    const published = server.diagnostics(uri, (d) => d.diagnostics.length > 0);
    server.open(file);
    const { diagnostics } = await published;
    const got = diagnostics.map((d) => `${String(d.code)}@${d.range.start.line}:${d.range.start.character}-${d.range.end.character}`).sort();
    const refs = text.split('\n')[7]!;
    const span = (s: string) => `${refs.indexOf(s)}-${refs.indexOf(s) + s.length}`;
    expect(got).toEqual([
      'control-character@4:7-8',
      'future-date@2:15-28',
      'line-too-long@5:4000-4001',
      `unknown-id@7:${span('fact:nosuchfact0000')}`,
      `unknown-id@7:${span('note:missing.md')}`,
    ].sort());
    const bell = diagnostics.find((d) => d.code === 'control-character');
    expect(bell?.message).toContain('U+0007');
    expect(bell?.severity).toBe(1);
    expect(diagnostics.find((d) => d.code === 'line-too-long')?.message).toContain('4,001 characters');
  });

  it('checks ids again when a note appears and when the store says it changed', async () => {
    const text = 'Later: note:later.md\n';
    const file = write('notes/later-ref.md', text);
    const uri = pathToFileURL(file).href;
    const first = server.diagnostics(uri);
    server.open(file);
    expect((await first).diagnostics.map((d) => d.code)).toEqual(['unknown-id']);

    write('later.md', '# later\n');
    const cleared = server.diagnostics(uri);
    void server.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: pathToFileURL(path.join(vault, 'later.md')).href, type: 1 }] });
    expect((await cleared).diagnostics).toEqual([]);

    fs.rmSync(path.join(vault, 'later.md'));
    const again = server.diagnostics(uri);
    void server.connection.sendNotification(STORE_CHANGED);
    expect((await again).diagnostics.map((d) => d.code)).toEqual(['unknown-id']);
  });

  it('re-checks an edited document', async () => {
    const file = write('notes/edit.md', 'clean\n');
    const uri = pathToFileURL(file).href;
    const first = server.diagnostics(uri);
    server.open(file);
    expect((await first).diagnostics).toEqual([]);
    const second = server.diagnostics(uri, (d) => d.version === 2);
    server.change(uri, 2, 'now with a \u0001 control\n');
    expect((await second).diagnostics.map((d) => d.code)).toEqual(['control-character']);
  });

  it('goes to the vault file and line of entry and note ids, and of a fact saved with a sentence', async () => {
    const text = `Entry ${ids.entry}\nNote note:daily/${ids.entryDay}.md\nFact ${ids.deployFact}\nNone fact:nosuchfact0000\n`;
    const uri = server.open(write('notes/definition.md', text));
    const dayFile = path.join(vault, 'daily', `${ids.entryDay}.md`);
    const dayLines = fs.readFileSync(dayFile, 'utf8').split('\n');
    const at = async (marker: string): Promise<Location | null> =>
      server.connection.sendRequest('textDocument/definition', { textDocument: { uri }, position: position(text, marker, marker.length + 2) });

    // The entry's line: the heading carrying its anchor where the vault writes one, else its text.
    const lineOf = (id: string, text: string) => {
      const anchored = dayLines.findIndex((l) => l.includes(id.slice(id.lastIndexOf('#') + 1)));
      return anchored !== -1 ? anchored : dayLines.findIndex((l) => l.includes(text));
    };
    const entry = await at('Entry ');
    expect(entry?.uri).toBe(pathToFileURL(dayFile).href);
    expect(entry!.range.start.line).toBe(lineOf(ids.entry, 'Standup is at 9:30'));
    expect(entry!.range.start.line).toBeGreaterThan(0);
    const note = await at('Note ');
    expect(note).toMatchObject({ uri: pathToFileURL(dayFile).href, range: { start: { line: 0 } } });
    const fact = await at('Fact ');
    expect(fact!.range.start.line).toBe(lineOf(ids.deployEntry, ids.entryText));
    expect(await at('None ')).toBeNull();
  });

  it('marks a retired fact lightly and stops offering it (retired through the journal operation retire_memory records)', async () => {
    const saved = ok(await services.memory.saveFact({ subject: 'temp flag', predicate: 'is', object: 'on' }, 'test'));
    await services.store.commit(() => ({ op: { op: 'memory.retired', at: services.store.now, id: saved.id }, result: null }));
    const text = `Was ${saved.id}\nfact:\n`;
    const file = write('notes/retired.md', text);
    const uri = pathToFileURL(file).href;
    const published = server.diagnostics(uri);
    server.open(file);
    const { diagnostics } = await published;
    expect(diagnostics.map((d) => [d.code, d.severity])).toEqual([['retired-id', 3]]);
    expect(diagnostics[0]?.message).toContain('restore_memory');
    const offered = await complete(uri, text, 'fact:\n', 'fact:'.length);
    expect(offered.items.map((i) => i.label)).not.toContain(saved.id);
  });

  it('refuses to start without the limits the host must send', async () => {
    await expect(startNotesServer(services, null)).rejects.toThrow(/statementMax/);
  });
});
