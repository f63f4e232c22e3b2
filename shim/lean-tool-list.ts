import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

type Schema = Record<string, unknown>;

function withoutDialect(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || !('$schema' in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema as Schema;
  return rest;
}

/**
 * A tools/list answer without the `$schema` keyword the SDK writes into every input and output
 * schema (`"$schema":"http://json-schema.org/draft-07/schema#"`, 52 bytes, twice per tool: about
 * 1.2 KB of the 8 KB an agent's context pays for the whole list). The keyword names a dialect;
 * these schemas mean the same in draft-07 and 2020-12, which MCP assumes when it is absent.
 * Every other message passes untouched.
 */
export function leanToolList(message: JSONRPCMessage): JSONRPCMessage {
  const result = 'result' in message ? (message.result as { tools?: unknown }) : undefined;
  if (!result || !Array.isArray(result.tools)) return message;
  const tools = result.tools.map((tool: Schema) => ({
    ...tool,
    inputSchema: withoutDialect(tool.inputSchema),
    ...(tool.outputSchema ? { outputSchema: withoutDialect(tool.outputSchema) } : {}),
  }));
  return { ...message, result: { ...result, tools } } as JSONRPCMessage;
}

/** Applies `leanToolList` to everything a server sends through this transport. */
export function withLeanToolList<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(leanToolList(message), options);
  return transport;
}
