import { describe, expect, it } from 'vitest';
import { compilePattern, ftsPrefilter, regexSyntaxIn, requiredLiterals } from '../../../src/core/lcm/regexPattern';
import { compiled } from './grepReference';

describe('lcm_grep regex patterns', () => {
  it('finds the literals every match must contain, and none where an alternation or optional part makes them uncertain', () => {
    expect(requiredLiterals('config\\.threshold.*0\\.[0-9]+')).toEqual(['config.threshold', '0.']);
    expect(requiredLiterals('npm (run|test) build')).toEqual(['npm ', ' build']);
    expect(requiredLiterals('(?:foo)bar')).toEqual(['foo', 'bar']);
    expect(requiredLiterals('colou?r')).toEqual(['colo', 'r']);
    expect(requiredLiterals('ab+c')).toEqual(['ab', 'c']);
    expect(requiredLiterals('a|b')).toEqual([]);
    // A group of a kind not understood (here a lookahead, which RE2 refuses anyway) proves nothing.
    expect(requiredLiterals('(?!skip)word')).toEqual([]);
    expect(requiredLiterals('(x)?yz')).toEqual(['yz']);
    expect(requiredLiterals('\\d{3}-\\w+')).toEqual(['-']);
    expect(requiredLiterals('[abc]def\\n')).toEqual(['def\n']);
    expect(requiredLiterals('\\bfunction \\w+\\(')).toEqual(['function ', '(']);
  });

  it('turns a literal into one FTS phrase of the analyzed words it fully bounds, and a last word that may be cut into its prefix or a term it begins with', () => {
    const orShorter = (w: string) => `("${w}*" OR ${Array.from({ length: w.length - 1 }, (_, k) => `"${w.slice(0, k + 1)}"`).join(' OR ')})`;
    expect(ftsPrefilter('config.threshold')).toBe(orShorter('threshold'));
    expect(ftsPrefilter(' build ')).toBe('"build"');
    // Bounded words are stemmed as the index stems them.
    expect(ftsPrefilter(' new dependencies ')).toBe('"new depend"');
    expect(ftsPrefilter('npm run dev')).toBe(`"run" ${orShorter('dev')}`);
    // A one-letter prefix, or a number prefix under four digits, expands to too many index terms.
    expect(ftsPrefilter('npm run x')).toBe('"run"');
    expect(ftsPrefilter('2025-11-1')).toBe('"11"');
    // A word with a digit is never stemmed: its term begins with the literal's end.
    expect(ftsPrefilter('2025-11-1234')).toBe('"11 1234*"');
    expect(ftsPrefilter('chatbot-ui')).toBe(orShorter('ui'));
    expect(ftsPrefilter('subagent')).toBeUndefined();
    expect(ftsPrefilter('snake_case_name')).toBe(`"cas" ${orShorter('name')}`);
    // A leading word may be the tail of a longer one (pnpm), whatever \b says: JavaScript's \b is ASCII-only.
    expect(ftsPrefilter('function ')).toBeUndefined();
    // CJK pairs hold wherever the run lies, but the last character's pair when the literal ends inside the run.
    expect(ftsPrefilter('髪の毛が')).toBe('"髪の の毛"');
    expect(ftsPrefilter('「髪の毛」')).toBe('"髪の の毛"');
    expect(ftsPrefilter('毛')).toBeUndefined();
  });

  it('refuses invalid patterns with the engine\'s own message, the constructs RE2 lacks by name, and unknown flags', () => {
    expect(compilePattern('foo(')).toMatchObject({ error: expect.stringMatching(/not a valid regular expression \(RE2 syntax\): missing \)/) });
    expect(compilePattern('(?<=a)b')).toMatchObject({ error: expect.stringContaining('a lookbehind "(?<="') });
    expect(compilePattern('a(?!b)')).toMatchObject({ error: expect.stringContaining('a lookahead') });
    expect(compilePattern('(a)\\1')).toMatchObject({ error: expect.stringContaining('a backreference') });
    expect(compilePattern('(?<n>a)\\k<n>')).toMatchObject({ error: expect.stringContaining('a named backreference') });
    // Escaped or inside a class, the same characters are plain text.
    expect(compilePattern('\\(?=x')).not.toHaveProperty('error');
    expect(compilePattern('[(?=]')).not.toHaveProperty('error');
    expect(compilePattern('/x/g')).toMatchObject({ error: expect.stringContaining('flag "g"') });
    const ok = compilePattern('/Ollama/i');
    expect('regex' in ok && ok.regex.flags).toBe('i');
    expect('regex' in ok && ok.caseInsensitive).toBe(true);
    const path = compilePattern('/home/user/');
    expect('regex' in path && path.regex.firstMatch('cd /home/user/x')).toEqual({ index: 3, length: 11 });
  });

  it('proves no literal it cannot: inline flags, RE2\'s \\pL, [[:alpha:]], (?P<name>) and octal escapes', () => {
    expect(compiled('(?i)ollama').literals).toEqual([]);
    expect(compiled('\\pLfoo').literals).toEqual(['foo']);
    expect(compiled('[[:alpha:]]]x').literals).toEqual([']x']);
    expect(compiled('(?P<word>abc)d').literals).toEqual(['abc', 'd']);
    expect(compiled('\\012ab').literals).toEqual(['ab']);
    expect(compiled('\\x{41}bc').literals).toEqual(['bc']);
    // Under /i RE2 folds s with ſ and k with K: only such literals leave ASCII.
    expect(compiled('/ollama/i').foldsBeyondAscii).toBe(false);
    expect(compiled('/kubectl/i').foldsBeyondAscii).toBe(true);
    expect(compiled('/kubectl/i').regex.firstMatch('\u212Aubectl')).toEqual({ index: 0, length: 7 });
  });

  it('names the regex syntax a full_text pattern holds, and lets words, phrases and prefixes through', () => {
    expect(regexSyntaxIn('config\\.threshold')).toMatch(/backslash/);
    expect(regexSyntaxIn('error.*retry')).toMatch(/wildcard/);
    expect(regexSyntaxIn('[0-9]+ items')).toMatch(/character class/);
    expect(regexSyntaxIn('foo|bar')).toMatch(/alternation/);
    expect(regexSyntaxIn('^start')).toMatch(/anchor/);
    expect(regexSyntaxIn('"error handling" retries')).toBeUndefined();
    expect(regexSyntaxIn('deploy* what broke?')).toBeUndefined();
    expect(regexSyntaxIn('database migration (v2)')).toBeUndefined();
  });
});
