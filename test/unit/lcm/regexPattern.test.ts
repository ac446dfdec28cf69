import { describe, expect, it } from 'vitest';
import { compilePattern, ftsPrefilter, regexSyntaxIn, requiredLiterals } from '../../../src/core/lcm/regexPattern';

describe('lcm_grep regex patterns', () => {
  it('finds the literals every match must contain, and none where an alternation or optional part makes them uncertain', () => {
    expect(requiredLiterals('config\\.threshold.*0\\.[0-9]+')).toEqual(['config.threshold', '0.']);
    expect(requiredLiterals('npm (run|test) build')).toEqual(['npm ', ' build']);
    expect(requiredLiterals('(?:foo)bar')).toEqual(['foo', 'bar']);
    expect(requiredLiterals('colou?r')).toEqual(['colo', 'r']);
    expect(requiredLiterals('ab+c')).toEqual(['ab', 'c']);
    expect(requiredLiterals('a|b')).toEqual([]);
    expect(requiredLiterals('(?!skip)word')).toEqual(['word']);
    expect(requiredLiterals('(x)?yz')).toEqual(['yz']);
    expect(requiredLiterals('\\d{3}-\\w+')).toEqual(['-']);
    expect(requiredLiterals('[abc]def\\n')).toEqual(['def\n']);
    expect(requiredLiterals('\\bfunction \\w+\\(')).toEqual(['function ', '(']);
  });

  it('turns a literal into one FTS phrase of the words it fully bounds (the last may be a prefix, unless too short to narrow)', () => {
    expect(ftsPrefilter('config.threshold')).toBe('"threshold*"');
    expect(ftsPrefilter(' build ')).toBe('"build"');
    expect(ftsPrefilter('npm run dev')).toBe('"run dev*"');
    // A one-letter prefix, or a number prefix under four digits, expands to too many index terms.
    expect(ftsPrefilter('npm run x')).toBe('"run"');
    expect(ftsPrefilter('2025-11-1')).toBe('"11"');
    expect(ftsPrefilter('2025-11-1234')).toBe('"11 1234*"');
    expect(ftsPrefilter('chatbot-ui')).toBe('"ui*"');
    expect(ftsPrefilter('subagent')).toBeUndefined();
    expect(ftsPrefilter('snake_case_name')).toBe('"case name*"');
    // A leading word may be the tail of a longer one (pnpm), whatever \b says: JavaScript's \b is ASCII-only.
    expect(ftsPrefilter('function ')).toBeUndefined();
  });

  it('refuses invalid patterns with the engine\'s own message, nested repeats and unknown flags', () => {
    expect(compilePattern('foo(')).toMatchObject({ error: expect.stringMatching(/not a valid JavaScript regular expression: .*Unterminated group/) });
    expect(compilePattern('(a+)+$')).toMatchObject({ error: expect.stringContaining('(a+)+') });
    expect(compilePattern('/x/g')).toMatchObject({ error: expect.stringContaining('flag "g"') });
    const ok = compilePattern('/Ollama/i');
    expect('regex' in ok && ok.regex.flags).toBe('gi');
    expect('regex' in ok && ok.caseInsensitive).toBe(true);
    const path = compilePattern('/home/user/');
    expect('regex' in path && path.regex.source).toBe('\\/home\\/user\\/');
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
