import { HISTORY_SCOPE, type Redaction } from '../privacy/redaction';
import type { ParsedSession } from './parsedSession';

/**
 * A file's parsed sessions with the secrets in their titles, texts and tool inputs replaced by
 * placeholders, all in one redaction call (one lint per file, not per event). The same file
 * redacts to the same events, so a re-import still finds nothing changed.
 */
export async function redactSessions(sessions: readonly ParsedSession[], redaction: Redaction): Promise<ParsedSession[]> {
  if (!redaction.enabledFor(HISTORY_SCOPE)) return [...sessions];
  const fields = sessions.map((s) => ({ title: s.title ?? null, events: s.events.map((e) => ({ text: e.text, toolInput: e.toolInput ?? null })) }));
  const redacted = await redaction.value(fields, HISTORY_SCOPE);
  return sessions.map((s, i) => {
    const r = redacted[i] as (typeof fields)[number];
    return {
      ...s,
      ...(s.title === undefined ? {} : { title: r.title ?? s.title }),
      events: s.events.map((e, j) => {
        const re = r.events[j] as (typeof r.events)[number];
        return { ...e, text: re.text, ...(e.toolInput === undefined ? {} : { toolInput: re.toolInput }) };
      }),
    };
  });
}
