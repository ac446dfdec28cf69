/**
 * The Porter (1980) suffix-stripping algorithm for English, on a word of lower-case ASCII
 * letters. Written from the published description of the five steps; each step removes or
 * replaces one suffix when what is left before it has enough syllables (its "measure").
 */

function isConsonant(w: string, i: number): boolean {
  const c = w.charCodeAt(i);
  // a e i o u
  if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false;
  // y is a consonant at the start or after a vowel, a vowel after a consonant
  if (c === 121) return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** The number of vowel-consonant sequences in w[0, end): [C](VC)^m[V]. */
function measure(w: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && isConsonant(w, i)) i++;
  for (;;) {
    while (i < end && !isConsonant(w, i)) i++;
    if (i >= end) return m;
    while (i < end && isConsonant(w, i)) i++;
    m++;
    if (i >= end) return m;
  }
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(w, i)) return true;
  return false;
}

function endsDoubleConsonant(w: string, end: number): boolean {
  return end >= 2 && w[end - 1] === w[end - 2] && isConsonant(w, end - 1);
}

/** Consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "snow"). */
function endsCvc(w: string, end: number): boolean {
  if (end < 3 || !isConsonant(w, end - 1) || isConsonant(w, end - 2) || !isConsonant(w, end - 3)) return false;
  const c = w[end - 1];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

/** Replaces `suffix` with `to` when the stem before it has measure > `min`; undefined when the word does not end in it. */
function replaceIf(w: string, suffix: string, to: string, min: number): string | undefined {
  if (!w.endsWith(suffix)) return undefined;
  const stem = w.length - suffix.length;
  return measure(w, stem) > min ? w.slice(0, stem) + to : w;
}

const STEP2: readonly [string, string][] = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['bli', 'ble'],
  ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'],
  ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'],
  ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: readonly [string, string][] = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

/** The longest suffix of the list the word ends in (a word ends in at most one that counts). */
function longestSuffix<T extends string | readonly [string, string]>(w: string, list: readonly T[]): T | undefined {
  let best: T | undefined;
  let length = 0;
  for (const entry of list) {
    const suffix = typeof entry === 'string' ? entry : entry[0];
    if (suffix.length > length && w.endsWith(suffix)) {
      best = entry;
      length = suffix.length;
    }
  }
  return best;
}

export function porterStem(word: string): string {
  if (word.length <= 2) return word;
  let w = word;
  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (!w.endsWith('ss') && w.endsWith('s')) w = w.slice(0, -1);
  // Step 1b: -eed, -ed, -ing.
  let cleanup = false;
  if (w.endsWith('eed')) {
    if (measure(w, w.length - 3) > 0) w = w.slice(0, -1);
  } else if (w.endsWith('ed') && hasVowel(w, w.length - 2)) {
    w = w.slice(0, -2);
    cleanup = true;
  } else if (w.endsWith('ing') && hasVowel(w, w.length - 3)) {
    w = w.slice(0, -3);
    cleanup = true;
  }
  if (cleanup) {
    if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
    else if (endsDoubleConsonant(w, w.length) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
    else if (measure(w, w.length) === 1 && endsCvc(w, w.length)) w += 'e';
  }
  // Step 1c: y → i after a vowel somewhere before it.
  if (w.endsWith('y') && hasVowel(w, w.length - 1)) w = `${w.slice(0, -1)}i`;
  // Steps 2 and 3: double and single suffixes mapped to shorter ones.
  for (const list of [STEP2, STEP3]) {
    const hit = longestSuffix(w, list);
    if (hit) w = replaceIf(w, hit[0], hit[1], 0) ?? w;
  }
  // Step 4: suffixes removed when the stem has measure > 1.
  const hit = longestSuffix(w, STEP4);
  if (hit) {
    const stem = w.length - hit.length;
    if (measure(w, stem) > 1 && (hit !== 'ion' || /[st]$/.test(w.slice(0, stem)))) w = w.slice(0, stem);
  }
  // Step 5: a final e, and a double l.
  if (w.endsWith('e')) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  if (w.endsWith('ll') && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}
