import type { SecretLintRuleContext, SecretLintRuleCreator, SecretLintRuleReportHandler, SecretLintSourceCode } from '@secretlint/types';

/** One secret a rule reported: where, which message, and the values the rule named (the secret among them). */
export interface Finding {
  range: readonly [number, number];
  messageId: string;
  data: Record<string, unknown> | undefined;
}

export interface ConfiguredRule {
  rule: SecretLintRuleCreator;
  options?: object;
}

/**
 * Runs secretlint rules through their public rule API (the context a rule is created with and the
 * source its `file` handler reads), without @secretlint/core's `lintSource`. lintSource marks
 * every rule's start and end on the process-wide performance timeline, and its profiler observes
 * all marks and keeps them, searching them on each new one: over an import of thousands of texts
 * that grew quadratically (2.4 MB of transcripts took 3 s to import instead of 0.4 s, of which
 * the rules themselves were 0.1 s), and in the extension host it would keep every other
 * extension's marks too. The rules are created once and reused, as they keep no state per text.
 */
export class SecretScanner {
  private readonly handlers: { id: string; handler: SecretLintRuleReportHandler }[];
  private findings: Finding[] = [];

  constructor(rules: readonly ConfiguredRule[]) {
    const context: SecretLintRuleContext = {
      sharedOptions: {},
      // The message text would repeat the secret; only the messageId and the data are used.
      createTranslator: () => (messageId, data) => ({ message: '', messageId: String(messageId), data }),
      report: (d) => this.findings.push({ range: d.range, messageId: d.message.messageId, data: d.message.data as Record<string, unknown> | undefined }),
      // Only the comment filter ignores, and it is not run (secretRules.ts says why).
      ignore: () => undefined,
    };
    this.handlers = rules.map((r) => ({ id: r.rule.meta.id, handler: r.rule.create(context, r.options ?? {}) }));
  }

  /**
   * Every finding in `content`, in rule order. Synchronous: only a rule for a binary format (a
   * .p12 key file, never given to it here) answers with a promise, and one that did for a text
   * would have its findings lost, so it is an error a test of this module meets first.
   */
  scan(content: string): Finding[] {
    const source = sourceOf(content);
    const found: Finding[] = [];
    this.findings = found;
    try {
      for (const { id, handler } of this.handlers) {
        if (handler.file?.(source)) throw new Error(`secret rule ${id} answered asynchronously for a text; redaction runs rules synchronously`);
      }
    } finally {
      this.findings = [];
    }
    return found;
  }
}

/** A text as the rules read it: text content, no file behind it (rules keyed to file names, like .npmrc, see none). */
function sourceOf(content: string): SecretLintSourceCode {
  const unsupported = () => {
    throw new Error('positions are not computed for redaction');
  };
  return {
    hasBOM: false,
    content,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: 'text',
    ext: '',
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    locationToRange: unsupported,
    rangeToLocation: unsupported,
    positionToIndex: unsupported,
    indexToPosition: unsupported,
  };
}
