import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { DaemonClient } from '../shared/daemon-client.js';
import { hanactlVersion } from '../shared/version.js';
import { type ShimOptions, SessionState } from './session-state.js';
import { registerTools } from './tools.js';

const INSTRUCTIONS =
  'hanactl gives you database access through a local broker; you never see passwords. Start with list_connections and use_connection, then run_query. Statements are read-only unless a person allowed writes.';

/** Builds the shim's MCP server. Pure: it never touches stdio or `process`; main.ts connects it. */
export function createShimServer(daemon: DaemonClient, options: ShimOptions = {}): { server: McpServer; state: SessionState } {
  const server = new McpServer({ name: 'hanactl', version: hanactlVersion() }, { instructions: INSTRUCTIONS });
  const state = new SessionState(daemon, options);
  const policy = registerTools(server, daemon, state);
  server.server.oninitialized = () => {
    const client = server.server.getClientVersion();
    if (client) state.client = { name: client.name, ...(client.version ? { version: client.version } : {}) };
    void state.announce();
    // The tool annotations follow the starting connection's policy (best effort; a call still works).
    if (state.active) void daemon.getConnection(state.active).then((info) => policy.onActive(info.allowWrite), () => {});
  };
  return { server, state };
}
