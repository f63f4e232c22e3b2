import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN } from './hanactl-home.js';
import type { ShimHandle } from './mcp-client.js';

export interface RootsShimHandle extends ShimHandle {
  /** Replaces the client's roots and tells the shim (`notifications/roots/list_changed`). */
  setRoots(paths: readonly string[]): Promise<void>;
  /** How many times the shim asked for the roots. */
  rootsAsked(): number;
}

export interface RootsShimOptions {
  readonly args?: readonly string[];
  readonly roots?: readonly string[];
  /** Whether the client offers roots at all (default true). */
  readonly offerRoots?: boolean;
  readonly cwd?: string;
  readonly clientName?: string;
}

/**
 * Spawns the real `hanactl mcp` and connects the SDK's Client to it as an editor that offers
 * MCP roots (`capabilities.roots.listChanged`), answering `roots/list` from a list it can change.
 */
export async function startRootsShim(env: NodeJS.ProcessEnv, options: RootsShimOptions = {}): Promise<RootsShimHandle> {
  let roots = [...(options.roots ?? [])];
  let asked = 0;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...(options.args ?? [])],
    env: env as Record<string, string>,
    stderr: 'pipe',
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const offer = options.offerRoots !== false;
  const client = new Client(
    { name: options.clientName ?? 'roots-client', version: '1.0.0' },
    { capabilities: offer ? { roots: { listChanged: true } } : {} },
  );
  if (offer) {
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked++;
      return { roots: roots.map((p) => ({ uri: pathToFileURL(p).href, name: basename(p) })) };
    });
  }
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
    rootsAsked: () => asked,
    setRoots: async (paths) => {
      roots = [...paths];
      await client.sendRootsListChanged();
    },
  };
}
