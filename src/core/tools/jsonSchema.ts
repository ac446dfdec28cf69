import { z } from 'zod';
import type { ToolDefinition } from './toolDefinition';

/** The JSON schema VS Code and MCP clients see, generated from the zod schema the handler validates with. */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** `contributes.languageModelTools` for package.json, derived entirely from the registry. */
export function languageModelToolsManifest(tools: readonly ToolDefinition[]): object[] {
  return tools.map((t) => ({
    name: t.name,
    displayName: t.displayName,
    toolReferenceName: t.name,
    canBeReferencedInPrompt: true,
    icon: '$(database)',
    modelDescription: t.description,
    userDescription: firstSentence(t.description),
    tags: ['recollect', `recollect-${t.family}`],
    inputSchema: inputJsonSchema(t),
  }));
}

function firstSentence(text: string): string {
  const m = /^(.+?[.!?])(\s|$)/.exec(text);
  return (m?.[1] ?? text).replace(/`/g, '');
}
