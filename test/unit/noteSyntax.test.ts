import { describe, expect, it } from 'vitest';
import { completionContext, frontMatter, idAt, idsInLine, subjectCandidates } from '../../src/server/noteSyntax';

describe('memory ids and names in note text', () => {
  it('finds fact, entry and note ids, but not inside URLs, paths or words', () => {
    const line = 'See fact:0mx2abc123, entry:daily/2026-01-01.md#a1b2c3d4e5f6 and (note:people/ana.md). Not https://x.io/note:a.md or afact:x or note: prose';
    expect(idsInLine(line, 3).map((r) => [r.kind, r.id, line.slice(r.start, r.end)])).toEqual([
      ['fact', 'fact:0mx2abc123', 'fact:0mx2abc123'],
      ['entry', 'entry:daily/2026-01-01.md#a1b2c3d4e5f6', 'entry:daily/2026-01-01.md#a1b2c3d4e5f6'],
      ['note', 'note:people/ana.md', 'note:people/ana.md'],
    ]);
    expect(idAt(line, 3, 4)?.id).toBe('fact:0mx2abc123');
    expect(idAt(line, 3, 19)?.id).toBe('fact:0mx2abc123');
    expect(idAt(line, 3, 2)).toBeUndefined();
  });

  it('reads front matter fields, quoted or not, and ignores a file without it', () => {
    const fm = frontMatter(['---', 'date: "2026-01-02"', 'session_date: 2026-01-03', 'tags: [a]', '---', 'date: 2999-01-01']);
    expect(fm).toEqual({
      end: 4,
      fields: [
        { key: 'date', value: '2026-01-02', line: 1, valueStart: 7 },
        { key: 'session_date', value: '2026-01-03', line: 2, valueStart: 14 },
        { key: 'tags', value: '[a]', line: 3, valueStart: 6 },
      ],
    });
    expect(frontMatter(['# title', '---'])).toBeUndefined();
    expect(frontMatter(['---', 'date: 2026-01-01'])).toBeUndefined();
  });

  it('tells what is being typed: an id, a link, a front-matter value or a word', () => {
    expect(completionContext('x entry:daily/2026-01-01.md#a1', 30)).toEqual({ type: 'id', kind: 'entry', prefix: 'daily/2026-01-01.md#a1', start: 2 });
    expect(completionContext('see [[Build T', 13)).toEqual({ type: 'entity', prefix: 'Build T', start: 6 });
    expect(completionContext('predicate: "sch', 15, 'predicate')).toEqual({ type: 'predicate', prefix: 'sch', start: 12 });
    expect(completionContext('we ship on fri', 14)).toEqual({ type: 'word', prefix: 'fri', start: 11 });
    expect(completionContext('done. ', 6)).toEqual({ type: 'word', prefix: '', start: 6 });
  });

  it('offers the link under the cursor first, then the longest phrases around it', () => {
    const text = 'the [[build tool]] uses Vite';
    expect(subjectCandidates(text, 8)[0]).toEqual({ text: 'build tool', start: 6, end: 16 });
    const phrases = subjectCandidates('we use the build tool daily', 13).map((p) => p.text);
    expect(phrases[0]).toBe('we use the build tool daily');
    expect(phrases).toContain('build tool');
    expect(phrases).toContain('build');
    expect(phrases.every((p) => p.includes('build'))).toBe(true);
  });
});
