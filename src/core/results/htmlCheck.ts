import * as vm from 'node:vm';

export interface HtmlCheck {
  problems: string[];
  /** The page lacks the document structure itself, so the caller adds the html_render rules to the refusal. */
  incomplete: boolean;
}

const CLASSIC_TYPES = new Set(['', 'text/javascript', 'application/javascript', 'application/ecmascript', 'text/ecmascript', 'application/x-javascript', 'text/jscript']);
const JSON_TYPES = new Set(['application/json', 'application/ld+json', 'importmap', 'speculationrules']);

const MARKUP_WRITERS: readonly { pattern: RegExp; name: string }[] = [
  { pattern: /\bdocument\s*\.\s*write(?:ln)?\s*\(/g, name: 'document.write' },
  { pattern: /\.\s*innerHTML\s*\+?=(?!=)/g, name: '.innerHTML =' },
  { pattern: /\.\s*outerHTML\s*\+?=(?!=)/g, name: '.outerHTML =' },
  { pattern: /\binsertAdjacentHTML\s*\(/g, name: 'insertAdjacentHTML' },
];
// Bounded so a stray "{{" in one place and "}}" far below are not reported as one expression.
const TEMPLATE_EXPRESSION = /\{\{[^]{0,400}?\}\}/g;

/**
 * Checks a finished HTML page before it is written, collecting every problem rather than
 * stopping at the first, so one refusal is enough to fix the page. Scripts are compiled, never
 * run: vm.Script parses without executing anything.
 */
export function checkHtml(page: string): HtmlCheck {
  const lines = lineIndex(page);
  // Commented-out markup is not part of the page; blanking it (newlines kept) keeps offsets and line numbers true.
  const live = page.replace(/<!--[^]*?(?:-->|$)/g, (c) => c.replace(/[^\n]/g, ' '));
  const problems: string[] = [];

  const missing = [
    [/<html[\s>]/i, '<html>'],
    [/<\/html\s*>/i, '</html>'],
    [/<body[\s>]/i, '<body>'],
  ].flatMap(([re, tag]) => ((re as RegExp).test(live) ? [] : [`\`${tag as string}\``]));
  if (missing.length) problems.push(`not a complete HTML document: missing ${missing.join(', ')}`);

  const scripts = [...live.matchAll(/<script\b([^>]*)>([^]*?)<\/script\s*>/gi)];
  const opened = (live.match(/<script\b/gi) ?? []).length;
  if (opened > scripts.length) problems.push(`${opened - scripts.length} <script> tag(s) never closed with </script>`);

  scripts.forEach((m, i) => {
    const attrs = m[1] ?? '';
    const code = m[2] ?? '';
    if (/\bsrc\s*=/i.test(attrs)) return;
    const type = attribute(attrs, 'type').trim().toLowerCase();
    const codeStart = (m.index ?? 0) + m[0].indexOf('>') + 1;
    const firstLine = lines(codeStart);
    const label = `inline <script> #${i + 1} (page line ${firstLine})`;
    if (JSON_TYPES.has(type)) {
      try {
        JSON.parse(code);
      } catch (err) {
        problems.push(`${label} of type ${type} is not valid JSON: ${(err as Error).message}`);
      }
      return;
    }
    const isModule = type === 'module';
    if (!isModule && !CLASSIC_TYPES.has(type)) return; // a data block or template, not code
    const syntax = parseProblem(code, isModule);
    if (syntax) problems.push(`${label} does not parse: ${syntax.message}${syntax.line ? ` at page line ${firstLine + syntax.line - 1}` : ''}`);
    for (const { pattern, name } of MARKUP_WRITERS) {
      for (const hit of code.matchAll(pattern)) {
        problems.push(`${label} writes markup with \`${name}\` at page line ${lines(codeStart + (hit.index ?? 0))}: put the content in the HTML, or build elements with createElement and set textContent`);
      }
    }
  });

  problems.push(...markupCodeProblems(live, lines));

  const templated = [...live.matchAll(TEMPLATE_EXPRESSION)].map((m) => lines(m.index ?? 0));
  if (templated.length) {
    problems.push(`\`{{ }}\` template expression${templated.length > 1 ? 's' : ''} at page line${templated.length > 1 ? 's' : ''} ${templated.join(', ')}: nothing will fill these in; write the values themselves`);
  }
  return { problems, incomplete: missing.length > 0 };
}

/** Attributes whose value a browser follows or loads as a URL, where javascript: runs code. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'poster', 'background', 'cite', 'ping', 'lowsrc', 'dynsrc']);
/**
 * Code in the markup itself, which the script checks never see: inline event handlers
 * (onerror=, onclick=, …) and javascript: (or vbscript:) URLs. Script and style bodies are not
 * markup, so they are blanked first.
 */
function markupCodeProblems(live: string, lines: (offset: number) => number): string[] {
  const markup = live.replace(/(<(script|style)\b[^>]*>)([^]*?)(<\/\2\s*>)/gi, (_m, open: string, _t: string, body: string, close: string) => open + body.replace(/[^\n]/g, ' ') + close);
  const problems: string[] = [];
  for (const tag of tags(markup)) {
    const name = tag.name;
    const at = lines(tag.at);
    for (const [key, value] of tag.attributes) {
      if (/^on[a-z]/.test(key)) {
        problems.push(`<${name}> at page line ${at} has the inline event handler \`${key}=\`: handlers in markup run code the page's scripts are not checked for; attach it from a <script> with addEventListener`);
      } else if (URL_ATTRIBUTES.has(key) && /^(?:javascript|vbscript):/.test(urlScheme(value))) {
        problems.push(`<${name}> at page line ${at} has a \`${urlScheme(value).split(':')[0]}:\` URL in \`${key}\`: a link or source may not run code; point it at a real address, or attach the behaviour from a <script>`);
      }
    }
  }
  return problems;
}

interface Tag {
  name: string;
  at: number;
  attributes: [name: string, value: string][];
}

/**
 * The start tags of a page and their attributes, read the way a browser tokenizes them (a quoted
 * value may hold < and >), in one pass: a regex over tags would go back over the rest of the
 * page for every tag left open.
 */
function* tags(html: string): Generator<Tag> {
  const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
  let i = html.indexOf('<');
  while (i >= 0 && i < html.length) {
    if (!/[a-zA-Z]/.test(html[i + 1] ?? '')) {
      i = html.indexOf('<', i + 1);
      continue;
    }
    const at = i;
    let j = i + 1;
    while (j < html.length && !space(html[j]) && html[j] !== '>' && html[j] !== '/') j++;
    const tag: Tag = { name: html.slice(i + 1, j).toLowerCase(), at, attributes: [] };
    while (j < html.length && html[j] !== '>') {
      if (space(html[j]) || html[j] === '/') {
        j++;
        continue;
      }
      const start = j;
      while (j < html.length && !space(html[j]) && html[j] !== '>' && html[j] !== '/' && (html[j] !== '=' || j === start)) j++;
      const key = html.slice(start, j).toLowerCase();
      while (space(html[j])) j++;
      let value = '';
      if (html[j] === '=') {
        j++;
        while (space(html[j])) j++;
        const quote = html[j];
        if (quote === '"' || quote === "'") {
          const end = html.indexOf(quote, j + 1);
          value = html.slice(j + 1, end < 0 ? html.length : end);
          j = end < 0 ? html.length : end + 1;
        } else {
          const vs = j;
          while (j < html.length && !space(html[j]) && html[j] !== '>') j++;
          value = html.slice(vs, j);
        }
      }
      tag.attributes.push([key, value]);
    }
    yield tag;
    i = html.indexOf('<', j);
  }
}

/** A URL attribute's value as a browser reads its scheme: character references decoded, ASCII whitespace and controls dropped, lower case. */
function urlScheme(value: string): string {
  const named: Record<string, string> = { colon: ':', tab: '\t', newline: '\n', nbsp: ' ' };
  return value
    .replace(/&#x([0-9a-f]+);?/gi, (_m, h: string) => String.fromCodePoint(Math.min(0x10ffff, parseInt(h, 16))))
    .replace(/&#(\d+);?/g, (_m, d: string) => String.fromCodePoint(Math.min(0x10ffff, Number(d))))
    .replace(/&([a-z]+);/gi, (m, n: string) => named[n.toLowerCase()] ?? m)
    .replace(/[\u0000-\u0020\u007f]/g, '')
    .toLowerCase()
    .slice(0, 20);
}

function parseProblem(code: string, isModule: boolean): { message: string; line?: number } | undefined {
  // Node parses ES modules only behind an experimental flag, so a module's import/export
  // declarations are blanked (lines kept) and the rest is parsed as the body of an async
  // function in strict mode — which is what a module body is, top-level await included.
  const source = isModule ? `(async function () { 'use strict';\n${blankModuleSyntax(code)}\n})` : code;
  try {
    new vm.Script(source, { filename: 'script' });
    return undefined;
  } catch (err) {
    const e = err as Error;
    const at = /^script:(\d+)/.exec(e.stack ?? '');
    const line = at ? Number(at[1]) - (isModule ? 1 : 0) : undefined;
    return line !== undefined && line >= 1 ? { message: e.message, line } : { message: e.message };
  }
}

function blankModuleSyntax(code: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  return code
    .replace(/^[ \t]*import\b\s*(?:[\w$*{][^;]*?\bfrom\s*)?(['"])[^'"\n]*\1\s*;?/gm, blank)
    .replace(/^[ \t]*export\b\s*(?:\*|\{[^}]*\})(?:\s*from\s*(['"])[^'"\n]*\1)?\s*;?/gm, blank)
    .replace(/^([ \t]*)export\s+default\s+/gm, (s, indent: string) => `${indent}void ${' '.repeat(Math.max(0, s.length - indent.length - 5))}`)
    .replace(/^([ \t]*)export\s+(?=(?:async\s+)?function|class|const|let|var)/gm, blank);
}

function attribute(attrs: string, name: string): string {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(attrs);
  return m ? (m[1] ?? m[2] ?? m[3] ?? '') : '';
}

/** Offset → 1-based line number, by binary search over the line starts. */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}
