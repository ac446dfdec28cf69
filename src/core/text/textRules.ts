/**
 * The text rules the memory spec sets for anything saved on its own: valid Unicode, and no
 * control characters other than tab, newline and carriage return (U+007F counts as one).
 */
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export function textProblem(field: string, text: string): string | undefined {
  const lone = findLoneSurrogate(text);
  if (lone !== -1) return `${field} is not valid Unicode: an unpaired surrogate at character ${lone}`;
  const m = FORBIDDEN_CONTROL.exec(text);
  if (m) {
    const code = m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return `${field} holds the control character U+${code} at character ${m.index}; only tab, newline and carriage return are allowed`;
  }
  return undefined;
}

/**
 * A one-line label other agents read as who wrote something or what it builds on (`source`,
 * `cites`): valid Unicode with no control character at all (C0 with tab and newline, DEL, C1,
 * where ESC starts a terminal escape sequence) and no bidirectional control, which could make
 * one name display as another.
 */
const NAME_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;

export function nameProblem(field: string, text: string): string | undefined {
  const lone = findLoneSurrogate(text);
  if (lone !== -1) return `${field} is not valid Unicode: an unpaired surrogate at character ${lone}`;
  const m = NAME_FORBIDDEN.exec(text);
  if (!m) return undefined;
  const c = m[0].charCodeAt(0);
  const code = c.toString(16).toUpperCase().padStart(4, '0');
  const kind = c < 0x20 || (c >= 0x7f && c <= 0x9f) ? 'the control character' : 'the invisible formatting character';
  return `${field} holds ${kind} U+${code} at character ${m.index}; it must be one line of printable text`;
}

/** Escapes control characters (and unpaired surrogates) so the text is kept verbatim but inert. */
export function escapeControls(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const isHigh = c >= 0xd800 && c <= 0xdbff;
    const isLow = c >= 0xdc00 && c <= 0xdfff;
    if (isHigh && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += text[i]! + text[i + 1]!;
        i++;
        continue;
      }
    }
    if (isHigh || isLow || FORBIDDEN_CONTROL.test(text[i]!)) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += text[i];
  }
  return out;
}

function findLoneSurrogate(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

/** Subjects and predicates match regardless of case and spacing: "Build Tool" is "build  tool". */
export function normalizeKey(text: string): string {
  return text.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}
