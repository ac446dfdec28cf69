import { WebviewClient } from '../shared/client';
import { RULES_GUARDS, parseRulesNotice, type RequestMap, type RulesNotice } from '../shared/rulesProtocol';

/** The rule panel keeps nothing across reloads: the store is its state. */
export type RulesClient = WebviewClient<RequestMap, Record<string, never>, RulesNotice>;

export function rulesClient(): RulesClient {
  return new WebviewClient<RequestMap, Record<string, never>, RulesNotice>(RULES_GUARDS, parseRulesNotice);
}
