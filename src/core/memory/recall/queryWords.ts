/**
 * Turning a request written as a sentence into a keyword query. get_context receives "can I
 * deploy the web app on Friday?" rather than keywords: requiring every word (search_text's
 * rule) would find nothing, and matching any word including "can" and "the" would match
 * everything. So the function words go and any remaining word may match; BM25 then ranks
 * documents holding more, and rarer, of them first.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    'tell know please need want get got also us may might must shall ok okay ' +
    // What contractions leave once the apostrophe splits them, as the index splits them.
    'don doesn didn isn aren wasn weren won wouldn couldn shouldn can cannot ll ve re'
  ).split(/\s+/),
);

/** At most this many words reach the index: a pasted paragraph would otherwise match the whole store. */
const MAX_WORDS = 24;

export function contentWords(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  // The same word boundaries the query parser and the index use: "chat-helpers" is two words.
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}\p{M}_]+/gu)) {
    const word = m[0];
    if (STOP_WORDS.has(word) || seen.has(word)) continue;
    if (word.length === 1 && !/\p{N}/u.test(word) && !/[^\p{Script=Latin}]/u.test(word)) continue;
    seen.add(word);
    out.push(word);
    if (out.length >= MAX_WORDS) break;
  }
  return out;
}

/**
 * Does the request ask whether something may be done? Then standing rules come first, whether
 * or not they share its words: an agent about to act needs the rule more than the match.
 */
const PERMISSION = [
  /\b(may|can|could|should|shall|must)\s+(i|we|you|it|they|the agent|agents?)\b/i,
  /\b(am i|are we|is it|is this|is that)\s+(allowed|permitted|ok|okay|fine|safe|authori[sz]ed)\b/i,
  /\b(allowed|permitted|permission|approv\w*|authori[sz]\w*|sign[- ]?off|forbidden|prohibited)\b/i,
  /\b(ok|okay|alright|fine|safe)\s+to\b/i,
  /\b(need|needs|require|requires|required)\s+(to ask|approval|permission|a review|review)\b/i,
  /\b(policy|policies|rule|rules)\b/i,
];

export function asksPermission(text: string): boolean {
  return PERMISSION.some((re) => re.test(text));
}

/** Predicates that mark a fact as a standing rule (normalised keys). */
export const RULE_PREDICATES = ['rule', 'rules', 'policy', 'policies', 'approval', 'approvals', 'requires approval', 'needs approval', 'permission', 'permissions', 'allowed', 'forbidden'];
