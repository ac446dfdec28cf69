import { textProblem } from '../text/textRules';

/**
 * The name the MCP server falls back to when a client sent no `clientInfo.name`. It still
 * labels what that client saves, but it names nobody: two such clients would be the same
 * "agent", so requests between agents refuse it.
 */
export const UNNAMED_CONNECTION = 'mcp-client';

export const CONNECTION_NAME_MAX = 100;

/**
 * How connection names are compared: surrounding spaces dropped and ASCII letters lowered —
 * exactly what SQLite's `lower(trim(x))` does, so the same rule can run inside a query
 * (whats_new leaves out a connection's own writes by their `source`).
 */
export function connectionKey(name: string): string {
  return name.replace(/^ +| +$/g, '').replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Why a connection cannot take part in requests between agents, or undefined when it can. */
export function connectionProblem(name: string): string | undefined {
  const key = connectionKey(name);
  if (!key || key === UNNAMED_CONNECTION) {
    return (
      'this connection has no name, so requests between agents can neither come from it nor be addressed to it. ' +
      'Give it a name, then reconnect: an MCP client names itself with clientInfo.name at initialize, or start the server as ' +
      '`recollect mcp --name <name>`; in VS Code set recollect.connectionName'
    );
  }
  if (name.length > CONNECTION_NAME_MAX) return `this connection's name is ${name.length} characters, over the limit of ${CONNECTION_NAME_MAX}; start the server with a shorter --name`;
  const bad = textProblem("this connection's name", name);
  return bad ? `${bad}; start the server with another --name` : undefined;
}
