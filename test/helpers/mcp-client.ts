import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BIN } from './hanactl-home.js';

export interface ShimHandle {
  readonly client: Client;
  /** Everything the shim wrote to stderr. */
  stderr(): string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** Spawns the real `hanactl mcp` and connects the SDK's real Client to it over stdio. */
export async function startShim(env: NodeJS.ProcessEnv, args: readonly string[] = [], clientName = 'test-client'): Promise<ShimHandle> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    env: env as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: async (name, callArgs = {}) => (await client.callTool({ name, arguments: callArgs })) as CallToolResult,
    close: () => client.close(),
  };
}

/** The text of a tool result. */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}
