import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleCreator } from '@secretlint/types';
import type { ConfiguredRule } from './secretScanner';

/**
 * The rules secret detection runs: secretlint's recommended preset, maintained upstream, plus a
 * password rule of our own (the preset finds credentials in URLs, never a bare `password: …`).
 *
 * The preset's comment filter is left out: a transcript that quotes `secretlint-disable` would
 * otherwise switch detection off for whatever follows it. The AWS rule also scans for access key
 * ids (off in the preset's defaults, since a bare id is only half a key; an id in a transcript is
 * still something a person would not want kept).
 */
const COMMENT_FILTER = '@secretlint/secretlint-rule-filter-comments';
const AWS = '@secretlint/secretlint-rule-aws';
export const PASSWORD_RULE = 'recollect/password';

/**
 * `password: hunter2-x`, `"password": "…"`, `DB_PASSWORD=…`, `the passphrase is …`. A quoted
 * value is a password as written; an unquoted one must hold a digit or a symbol, so prose and
 * code (`password: string`, `password = getPassword()`, `password is wrong`) are left alone.
 * The value stops at brackets, so a placeholder is never matched again.
 */
const PASSWORD = /(?:password|passphrase)["']?[ \t]{0,3}(?::|=|[ \t]+is[ \t]+)[ \t]{0,3}(?:"([^"\n]{4,200})"|'([^'\n]{4,200})'|([^\s"'`,;(){}<>[\]]{6,200}))/gi;
const UNQUOTED_SECRET = /[0-9!@#$%^&*_+=~?-]/;

const passwordRule: SecretLintRuleCreator = {
  messages: { Password: { en: () => 'found a password' } },
  meta: { id: PASSWORD_RULE, type: 'scanner', recommended: true, supportedContentTypes: ['text'] },
  create(context) {
    const t = context.createTranslator({ Password: { en: () => 'found a password' } });
    return {
      file(source) {
        for (const m of source.content.matchAll(PASSWORD)) {
          const value = m[1] ?? m[2] ?? m[3] ?? '';
          if (m[3] !== undefined && !UNQUOTED_SECRET.test(value)) continue;
          // The value's own place: the match ends with it (and its closing quote, if any).
          const end = (m.index ?? 0) + m[0].length - (m[3] === undefined ? 1 : 0);
          context.report({ message: t('Password'), range: [end - value.length, end] });
        }
      },
    };
  },
};

const AWS_SECRET_RULE = 'recollect/aws-secret-access-key';

/**
 * `AWS_SECRET_ACCESS_KEY="…"`, `aws_secret_access_key = …`, `"SecretAccessKey": "…"`. The preset's
 * AWS rule ends its match at a word boundary, so a secret whose last character is `/` or `+`
 * (about one in thirty) was kept; this rule ends at the next character that cannot be in a key.
 */
const AWS_SECRET = /(?:aws_?)?secret_?access_?key["']?[ \t]{0,3}(?::|=>|=)[ \t]{0,3}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi;

const awsSecretRule: SecretLintRuleCreator = {
  messages: { AWSSecretAccessKey: { en: () => 'found an AWS secret access key' } },
  meta: { id: AWS_SECRET_RULE, type: 'scanner', recommended: true, supportedContentTypes: ['text'] },
  create(context) {
    const t = context.createTranslator({ AWSSecretAccessKey: { en: () => 'found an AWS secret access key' } });
    return {
      file(source) {
        for (const m of source.content.matchAll(AWS_SECRET)) {
          const key = m[1] ?? '';
          const start = (m.index ?? 0) + m[0].lastIndexOf(key);
          context.report({ message: t('AWSSecretAccessKey'), range: [start, start + key.length] });
        }
      },
    };
  },
};

/** The label a placeholder names, per messageId the rules report; a messageId not listed is labelled by its words. */
const LABELS: Record<string, string> = {
  AWSAccessKeyID: 'AWS access key',
  AWSSecretAccessKey: 'AWS secret access key',
  AWSAccountID: 'AWS account id',
  GITHUB_TOKEN: 'GitHub token',
  GITLAB_PERSONAL_ACCESS_TOKEN: 'GitLab token',
  PrivateKey: 'private key',
  PrivateKeyJSON: 'private key',
  SLACK_TOKEN: 'Slack token',
  IncomingWebhook: 'Slack webhook',
  NPM_ACCESS_TOKEN: 'npm token',
  Npmrc_authToken: 'npm token',
  PackageJSON_xOauthToken: 'GitHub token',
  BasicAuth: 'URL password',
  OPENAI_TOKEN: 'OpenAI key',
  ANTHROPIC_API_KEY: 'Anthropic key',
  GROQ_API_KEY: 'Groq key',
  HUGGINGFACE_USER_ACCESS_TOKEN: 'Hugging Face token',
  LINEAR_API_TOKEN: 'Linear key',
  NOTION_INTEGRATION_TOKEN: 'Notion token',
  SENDGRID_KEY: 'SendGrid key',
  SHOPIFY_KEY: 'Shopify key',
  MongoDBConnection: 'MongoDB password',
  MySQLConnection: 'MySQL password',
  PostgreSQLConnection: 'PostgreSQL password',
  Password: 'password',
  ExtraPattern: 'custom pattern',
};

/** Rules that report a whole URL for the password inside it: only the password is replaced, so the host stays readable. */
export const URL_PASSWORD_RULES: ReadonlySet<string> = new Set(['BasicAuth', 'MongoDBConnection', 'MySQLConnection', 'PostgreSQLConnection']);

export function labelOf(messageId: string): string {
  return LABELS[messageId] ?? messageId.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

/** The rules detection runs: every recommended rule but the comment filter, our password and AWS secret rules, and the extra rules given. */
export function secretRules(extra: readonly SecretLintRuleCreator[] = []): ConfiguredRule[] {
  const preset: ConfiguredRule[] = recommendedRules
    .filter((r) => r.meta.id !== COMMENT_FILTER)
    .map((r) => ({ rule: r as SecretLintRuleCreator, ...(r.meta.id === AWS ? { options: { enableIDScanRule: true } } : {}) }));
  return [...preset, { rule: passwordRule }, { rule: awsSecretRule }, ...extra.map((rule) => ({ rule }))];
}
