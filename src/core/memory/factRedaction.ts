import type { Redaction } from '../privacy/redaction';
import type { FactInput } from './memoryService';

/**
 * A fact and its sentence with their secrets replaced. The value is also read after its
 * predicate (`password: hunter2-x`), since a value alone (`hunter2-x`) looks like nothing;
 * where the predicate itself held a secret, the value is read alone.
 */
export async function redactFact(redaction: Redaction, fact: FactInput, statement: string | null, scope: string): Promise<{ fact: FactInput; statement: string | null }> {
  const framed = `${fact.predicate}: `;
  const [subject, predicate, objectInContext, object, redactedStatement] = await redaction.texts(
    [fact.subject, fact.predicate, framed + fact.object, fact.object, statement ?? ''],
    scope,
  ) as [string, string, string, string, string];
  const inContext = objectInContext.startsWith(framed) ? objectInContext.slice(framed.length) : undefined;
  return {
    fact: { ...fact, subject, predicate, object: inContext ?? object },
    statement: statement === null ? null : redactedStatement,
  };
}
