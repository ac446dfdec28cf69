import type { RedactionSettings } from './redaction';

/**
 * The redaction settings: RECOLLECT_REDACTION_EXTRA_PATTERNS and RECOLLECT_REDACTION_DISABLED_SCOPES
 * when set, else a host's settings (`recollect.redaction.extraPatterns`, `.disabledScopes`), else
 * none — the order of the store home and the ask limit (an env var set for a process speaks for
 * every surface in it). Patterns are a JSON array of strings (a pattern may hold a comma), or one
 * per line; scopes are separated by commas or whitespace. Values of the wrong type count as not set.
 */
export function redactionSettingsFrom(setting: { extraPatterns?: unknown; disabledScopes?: unknown } = {}, env: NodeJS.ProcessEnv = process.env): RedactionSettings {
  const patterns = env.RECOLLECT_REDACTION_EXTRA_PATTERNS?.trim();
  const scopes = env.RECOLLECT_REDACTION_DISABLED_SCOPES?.trim();
  return {
    extraPatterns: patterns ? patternsFromEnv(patterns) : strings(setting.extraPatterns),
    disabledScopes: scopes ? scopes.split(/[\s,]+/).filter(Boolean) : strings(setting.disabledScopes),
  };
}

function patternsFromEnv(raw: string): string[] {
  if (raw.startsWith('[')) {
    try {
      return strings(JSON.parse(raw));
    } catch {
      // Not JSON after all: one pattern per line, like any other value.
    }
  }
  return raw.split('\n').map((p) => p.trim()).filter(Boolean);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '') : [];
}
