import type { SecretLintRuleCreator } from '@secretlint/types';
import type { RE2 } from 're2-wasm';

export const EXTRA_RULE = 'recollect/extra-patterns';
export const EXTRA_LABEL = 'ExtraPattern';

export interface ExtraPatterns {
  rule: SecretLintRuleCreator | undefined;
  /** Each pattern RE2 would not compile, with its reason; the others still run. */
  problems: string[];
}

/**
 * A person's own patterns (the `recollect.redaction.extraPatterns` setting or
 * RECOLLECT_REDACTION_EXTRA_PATTERNS) as one rule. They run in RE2, in time linear in the
 * text, since a pattern typed into a setting must not be able to stall every write. RE2's wasm
 * is loaded only when there is a pattern: most stores never need it.
 */
export async function extraPatternRule(patterns: readonly string[]): Promise<ExtraPatterns> {
  if (!patterns.length) return { rule: undefined, problems: [] };
  const { RE2 } = await import('re2-wasm');
  const compiled: RE2[] = [];
  const problems: string[] = [];
  for (const p of patterns) {
    try {
      compiled.push(new RE2(p, 'gu'));
    } catch (err) {
      problems.push(`redaction pattern ${JSON.stringify(p.slice(0, 80))} is not a pattern RE2 accepts (${(err as Error).message}); it is not used`);
    }
  }
  if (!compiled.length) return { rule: undefined, problems };
  const messages = { [EXTRA_LABEL]: { en: () => 'matched an extra redaction pattern' } };
  const rule: SecretLintRuleCreator = {
    messages,
    meta: { id: EXTRA_RULE, type: 'scanner', recommended: true, supportedContentTypes: ['text'] },
    create(context) {
      const t = context.createTranslator(messages);
      return {
        file(source) {
          for (const re of compiled) {
            re.lastIndex = 0;
            for (let m = re.exec(source.content); m; m = re.exec(source.content)) {
              if (!m[0]) {
                re.lastIndex++;
                continue;
              }
              context.report({ message: t(EXTRA_LABEL), range: [m.index, m.index + (m[0] ?? '').length] });
            }
          }
        },
      };
    },
  };
  return { rule, problems };
}
