/**
 * The rule sets `reasoning_guide` hands out. They live in TypeScript rather than Markdown files
 * so every bundle (extension, CLI, MCP server) carries them without copying assets; a person's
 * own Markdown guides are read from disk by GuideService.
 */
export const BUILTIN_TOPICS = [
  'tool_generate',
  'tool_error',
  'web_search',
  'market_analysis',
  'targeted_read',
  'ask_user',
  'subagent_dispatch',
  'write_todo',
  'html_render',
  'office',
  'figure',
] as const;

export type BuiltinTopic = (typeof BUILTIN_TOPICS)[number];

/** Names topics had before a rename, still accepted so an older prompt keeps working. */
export const TOPIC_ALIASES: Readonly<Record<string, BuiltinTopic>> = { rag_web: 'web_search' };

const TOOL_GENERATE = `
Before writing a new helper, script or tool, check whether the work was already done:
- \`search_text\` / \`get_context\` with the task's key nouns; \`chat_history\` mode=tool_list for a call already paid for.
- \`error_history\` with the tool or library name, so known traps are designed out from the start.
When you do write one:
1. State its contract first: inputs, outputs, what it refuses. Validate inputs at the edge and fail with a message that names the bad argument.
2. Keep it single-purpose. Two behaviours behind a flag usually means two tools.
3. Make it safe to run twice: same inputs, same effect, no duplicate side effects.
4. Print or return something a later reader can act on — counts, paths, ids — not "done".
5. Run it once on a real input before calling it finished, and say what you ran.
If the user will reuse it, \`remember\` where it lives and how to call it (subject: the tool's name, predicate "usage").
`;

const TOOL_ERROR = `
When a tool call fails:
1. Read the whole error. Note the tool, the exact message and the arguments you sent.
2. Look it up before guessing: \`error_history\` with the tool name plus one or two distinctive words from the message. A hit carries the fix that worked last time; apply it first.
3. A result that says \`no data: {hash}\` points at a record: \`error_history\` with that hash.
4. No hit: change one thing at a time (an argument, a path, a permission) and retry. Do not repeat the identical call hoping for a different answer; two identical failures mean the call itself must change.
5. After three different attempts fail, stop and tell the user what you tried and what you suspect, instead of looping.
Once a fix is confirmed working — the call succeeded, not just "should work now" — and it took real effort, record it with \`write_error\`:
- tool_name exactly as called; keywords a future search would use (error code, library, operation);
- symptom verbatim; cause if you know it; action as an instruction a stranger could follow.
- outcome=resolved. failed and abandoned are accepted but not kept, so do not use them to log frustration.
Skip trivial slips (a typo in a path you just made up). Record when a failed result's \`next:\` hint asks you to.
`;

const WEB_SEARCH = `
Search memory before the web; what the user or an earlier session settled outranks a fresh page.
1. \`get_context\` with the question, then \`search_text\` for exact names, versions or ids it mentions.
2. If memory answers it and the fact is not time-sensitive, answer from memory and cite the id.
3. Otherwise search the web with a narrow query: product + version + the exact term, not a sentence.
Reading results:
- Prefer primary sources: official docs, changelogs, standards, the project's own repository.
- Check the date. For anything that changes (prices, versions, APIs, policies) a page older than the current release is a lead, not an answer.
- Two independent sources for a claim that matters; say so when you only found one.
- Quote numbers exactly with their unit and date; never round silently.
Afterwards:
- Cite each claim's source in the reply.
- If the answer is something the user will ask about again, offer to \`remember\` it as a fact (subject, predicate, value) with the source in \`cites\`.
`;

const MARKET_ANALYSIS = `
A market or competitor analysis is only as good as its dates and sources.
1. Pin the question: which market, which region, which period, which metric (revenue, units, share, price).
2. Check memory first (\`get_context\`, \`search_text\`) for figures and decisions the user already holds; reuse them and say how old they are.
3. Gather figures from filings, official statistics, company reports and reputable trade data. Label estimates as estimates and name who made them.
4. Keep one table of every number used: value, unit, currency, period, source, date retrieved. Convert currencies once, stating rate and date.
5. Separate what the data shows from what you infer. Give the strongest counter-argument to your own conclusion.
6. Note what would change the conclusion (a pending launch, a regulation, a price move).
Never present a forecast as a fact, and never offer investment advice as certainty.
When sources disagree, show the range and explain the difference (definitions, period, currency) rather than averaging it away.
Deliver the full analysis with \`write_result\` (md, or html for a page with charts — read \`figure\` first) and summarise it in the reply in a few lines.
`;

const TARGETED_READ = `
Read the part you need, not the whole thing.
1. Locate first: search for the symbol, heading or error text and note the file and line before opening anything.
2. Open a window around the hit (tens of lines), widen only if the answer is not there.
3. For long logs, read the end first — the failure is usually in the last lines — then search upward for the first error.
4. For structured files (JSON, YAML, CSV) read the keys or header before the values.
5. For earlier conversations, do not reread whole sessions: \`chat_history\` mode=search or \`lcm_grep\` to find the turn, then open only that run or summary.
6. Stop reading once you can answer; say which lines you relied on.
7. For a saved memory, \`retrieve_memory\` with the subject returns the current value directly; a full-text search is for when you do not know the subject.
A file you already read this session is in your context: use it instead of opening it again, unless it may have changed.
Generated, vendored and minified files are rarely the answer; look in the source they come from.
`;

const ASK_USER = `
Ask only when the answer changes what you do and you cannot find it yourself.
Before asking, look: \`get_context\` for saved preferences and rules, \`retrieve_memory\` for a fact the user already gave, the repository and its docs for conventions.
When you ask:
- One message, all questions at once, numbered. No drip-feeding one question per turn.
- Make each answerable in a word: offer the options you see and say which you would pick and why.
- State what you will do if they do not answer, then keep working on everything the question does not block.
- Never ask permission for something a saved rule already allows; never skip asking for something a saved rule says needs approval.
- Anything hard to undo (deleting data, spending money, publishing, force-pushing) is asked before acting, even when you are fairly sure.
- Separate questions of fact (you could look them up) from questions of choice (only the user can decide); ask only the second kind.
After the answer: if it is a lasting preference or decision, \`remember\` it (scope the project when it is project-specific) so no one asks again.
`;

const SUBAGENT_DISPATCH = `
If you are a sub-agent and cannot dispatch further, skip this guide and run every lookup yourself.
Dispatch when the work splits into independent parts, or when a part would flood your context (a wide search, a long read) and you need only its conclusion.
Brief a sub-agent as if it knows nothing:
1. The goal in one sentence, and why it matters to the overall task.
2. What you already know and ruled out, so it does not redo it; ids from memory it should start from.
3. Exact scope: which files, folders, sites or records; what it must not touch or change.
4. What to return, in a fixed shape: findings with their evidence (paths with lines, ids, URLs), what it tried that failed, and open questions. Ask for conclusions, not transcripts.
5. A size limit for the answer and a stopping rule ("stop after the first confirmed cause").
Give parallel sub-agents non-overlapping scopes. Read what they return critically; verify a claim before building on it.
Tell a sub-agent that fixes a tool failure to record it with \`write_error\`, so the fix outlives its session.
`;

const WRITE_TODO = `
Keep a todo list for work with more than three steps or more than one session.
- One item per outcome, phrased as a verifiable result ("tests for X pass"), not an activity ("work on X").
- Order by dependency; mark exactly one item in progress at a time.
- Mark an item done only when its result is checked, and note how (command run, file written).
- Add newly discovered work as items instead of doing it silently; drop items that turn out unnecessary and say why.
- Keep blocked items visible with what blocks them.
- Keep the list short enough to read at a glance; split a long one into phases and show only the current phase in detail.
- When the user changes the goal, rewrite the list instead of appending to it.
At the end, report what is done, what is not, and why.
Across sessions: a todo list in the chat disappears with the chat. Before stopping with items open, \`remember\` the open items with the project's scope, or write them to a file the user keeps, and mention where; a later session finds them with \`get_context\`.
`;

const HTML_RENDER = `
\`write_result\` with format=html checks the page before writing it, and refuses it — listing every problem — when:
- it is not a complete document: it needs \`<html>\` … \`</html>\` and a \`<body>\`;
- an inline \`<script>\` does not parse as JavaScript (JSON script blocks must be valid JSON);
- a script writes markup: \`document.write\`, \`.innerHTML =\`, \`.outerHTML =\`, \`insertAdjacentHTML\`;
- it holds \`{{ … }}\` template expressions, which nothing will fill in.
Build pages that way from the start:
1. Put the content in the HTML itself: headings, paragraphs, tables. A reader with scripts off still sees everything.
2. Use script only for behaviour (toggles, sorting, charts). Change text with \`textContent\`; build elements with \`document.createElement\` and \`append\`.
3. Fill every value when you write the file; there is no template engine.
4. Keep it self-contained: inline CSS, no external fonts; a chart library from a CDN only if the user accepts network access.
5. Set \`<meta charset="utf-8">\` and a \`<title>\`; respect \`prefers-color-scheme\` if you style colours.
A refused page was not written: fix every listed problem and call \`write_result\` again.
`;

const OFFICE = `
Office files (.docx, .xlsx, .pptx) are ZIP packages of XML parts; Word, Excel, PowerPoint, Pages, Numbers and Keynote reject a package with a broken part even when others open it.
- Generate with a maintained library (python-docx, openpyxl, python-pptx, docx or exceljs for JS) rather than writing XML by hand.
- To modify, open the existing file with the library and save it; never edit the XML with text replacement, which breaks split runs and relationships.
- Keep \`[Content_Types].xml\` and every \`_rels\` entry consistent: each part you add needs its content type and relationship.
- Text must be valid XML characters: strip control characters other than tab and newline before inserting.
- Excel: sheet names ≤ 31 characters without \`[]:*?/\\\`; write numbers and dates as typed values, not strings; formulas in English function names with commas.
- PowerPoint: start from a layout in the template; keep text inside placeholders so iWork maps it.
- Word: use built-in heading styles so the outline and table of contents work.
After saving, reopen the file with the library (or unzip and parse each XML part) to check it loads, and tell the user which app you could not test in.
Never overwrite the user's original: write a new file name unless they asked for in-place changes.
`;

const FIGURE = `
Read this before writing a chart, flowchart, diagram or formula.
Choosing:
- Trend over time → line; comparison across categories → bar (horizontal when labels are long); part of a whole with ≤ 5 parts → stacked bar, rarely pie; relation between two measures → scatter.
- Every chart needs a title, axis labels with units, and its data source.
Markdown that renders in VS Code and most viewers:
- Diagrams as fenced \`mermaid\` blocks: \`flowchart LR\` with \`A[Start] --> B{Check}\`, \`sequenceDiagram\`, \`gantt\`, \`pie\`. Keep node ids simple; put labels with punctuation in quotes.
- Formulas with \`$…$\` inline and \`$$…$$\` on their own lines, LaTeX syntax; escape underscores outside math.
- Tables as pipe tables, numbers right-aligned with \`---:\`.
In an HTML report (\`write_result\` format=html):
- Inline SVG for simple charts keeps the page self-contained; set \`viewBox\` and a \`<title>\` for accessibility.
- Draw with script only into an existing element, never by writing markup strings (see \`html_render\`).
Check the figure says what the text claims, and give the numbers in a table as well when precision matters.
`;

export const BUILTIN_GUIDES: Readonly<Record<BuiltinTopic, string>> = {
  tool_generate: TOOL_GENERATE.trim(),
  tool_error: TOOL_ERROR.trim(),
  web_search: WEB_SEARCH.trim(),
  market_analysis: MARKET_ANALYSIS.trim(),
  targeted_read: TARGETED_READ.trim(),
  ask_user: ASK_USER.trim(),
  subagent_dispatch: SUBAGENT_DISPATCH.trim(),
  write_todo: WRITE_TODO.trim(),
  html_render: HTML_RENDER.trim(),
  office: OFFICE.trim(),
  figure: FIGURE.trim(),
};
