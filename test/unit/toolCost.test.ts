import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/core/text/tokens';
import { inputJsonSchema, outputJsonSchema } from '../../src/core/tools/jsonSchema';
import { TOOLS } from '../../src/core/tools/registry';

/**
 * What every chat request pays for Recollect's tools: each tool's name, description and input
 * schema go to the model with every request (o200k tokens). A description that grows past the
 * budget must earn it, and a cut must keep every contract the spec states.
 */
/** 11,824 before the descriptions were cut; partial matches, fused search and RE2's limits then earned ~260 back. */
const BUDGET_TOKENS = 11_600;
/** Every field of every answer, refusals included; a bound that keeps the result schemas terse (no descriptions on their fields). */
const OUTPUT_BUDGET_TOKENS = 19_000;

describe('the cost of the tool definitions to every chat request', () => {
  it(`stays under ${BUDGET_TOKENS} tokens for all tools`, () => {
    const rows = TOOLS.map((t) => {
      const text = t.name + t.description + JSON.stringify(inputJsonSchema(t));
      return { name: t.name, chars: text.length, tokens: countTokens(text) };
    });
    const chars = rows.reduce((n, r) => n + r.chars, 0);
    const tokens = rows.reduce((n, r) => n + r.tokens, 0);
    console.log(`${TOOLS.length} tools: ${chars} characters, ${tokens} tokens; largest: ${[...rows].sort((a, b) => b.tokens - a.tokens).slice(0, 5).map((r) => `${r.name} ${r.tokens}`).join(', ')}`);
    expect(tokens).toBeLessThanOrEqual(BUDGET_TOKENS);
  });

  /**
   * The output schemas go in MCP's tools/list but to no model in VS Code: its MCP client keeps
   * a tool's name, description and input schema only (the 1.139 workbench never reads
   * outputSchema). What they cost is the handshake's size, bounded so they stay terse.
   */
  it(`keeps the output schemas under ${OUTPUT_BUDGET_TOKENS} tokens for all tools`, () => {
    const tokens = TOOLS.reduce((n, t) => n + countTokens(JSON.stringify(outputJsonSchema(t))), 0);
    console.log(`${TOOLS.length} output schemas: ${tokens} tokens`);
    expect(tokens).toBeLessThanOrEqual(OUTPUT_BUDGET_TOKENS);
  });
});
