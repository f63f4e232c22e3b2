import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MAX_TOOL_INPUT_VALUES } from '../shared/json-bounds.js';
import { hanactlVersion } from '../shared/version.js';
import type { Broker } from './broker.js';
import { registerCatalogTools } from './catalog-tools.js';
import { registerCuratedTools } from './curated-tools.js';
import { ProjectContext } from './project-context.js';
import { registerProjectTools } from './project-tools.js';
import { registerSchemaPrompts } from './schema-prompts.js';
import { registerSchemaResources } from './schema-resources.js';
import { SessionState, type ShimOptions } from './session-state.js';
import { registerTools } from './tools.js';

const INSTRUCTIONS =
  'hanactl gives you database access through a local broker; you never see passwords. Start with list_connections and use_connection; find your way with list_schemas, list_tables, describe_table and search_objects; then run_query. Statements are read-only unless a person allowed writes.';

/** Builds the shim's MCP server. Pure: it never touches stdio or `process`; main.ts connects it. */
export function createShimServer(daemon: Broker, options: ShimOptions = {}): { server: McpServer; state: SessionState } {
  // The arguments' values are counted before the tool's schema walks them (the transports bound the whole message).
  const server = new McpServer(
    { name: 'hanactl', version: hanactlVersion() },
    { instructions: INSTRUCTIONS, maxToolInputElements: MAX_TOOL_INPUT_VALUES },
  );
  const state = new SessionState(daemon, options);
  const queryTool = registerTools(server, daemon, state);
  const catalog = registerCatalogTools(server, daemon, state);
  // The active connection's curated tools: listed from the start when it is known, then kept in step.
  const curated = registerCuratedTools(server, daemon, state, [queryTool.runQuery, ...catalog.freeAccess]);
  void curated.sync();
  // Tables and views as resources, and the prompts that use them: separate lists, tools/list is unchanged.
  const resources = registerSchemaResources(server, daemon, state);
  registerSchemaPrompts(server, state, resources.names, resources.read);
  const project = new ProjectContext(daemon, state, queryTool, options);
  registerProjectTools(server, state, project);
  server.server.oninitialized = () => {
    const client = server.server.getClientVersion();
    if (client?.name) state.client = { name: client.name, ...(client.version ? { version: client.version } : {}) };
    void state.announce();
    // The tool annotations follow the starting connection's write access (best effort; a call still works).
    if (state.active)
      void daemon.getConnection(state.active).then(
        (info) => queryTool.onActive(info.allowWrite),
        () => {},
      );
    // The project: the client's roots, else --project, else the working folder (tools wait for it).
    // Over HTTP the URL fixed the connection, and the client's folders are not the daemon's to follow.
    if (options.transport !== 'http') project.start(server);
  };
  return { server, state };
}
