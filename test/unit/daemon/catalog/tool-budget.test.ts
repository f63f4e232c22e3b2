import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { expect, it } from 'vitest';
import { BUILT_IN_TOOL_NAMES, CURATED_LIST_SHARE } from '../../../../shared/curated.js';
import type { Broker } from '../../../../shim/broker.js';
import { registerCatalogTools } from '../../../../shim/catalog-tools.js';
import { withLeanToolList } from '../../../../shim/lean-tool-list.js';
import type { ProjectContext } from '../../../../shim/project-context.js';
import { registerProjectTools } from '../../../../shim/project-tools.js';
import { SessionState } from '../../../../shim/session-state.js';
import { registerTools } from '../../../../shim/tools.js';

/** The whole tools/list answer an agent loads into its context, with room left for detect_project (~570 bytes) and one more tool. */
const BUDGET_BYTES = 8192;
const HEADROOM_BYTES = 1100;

/** Listing tools calls nothing: a broker that is never reached. */
const daemon = {} as Broker;

async function listedTools(register: (server: McpServer) => void) {
  const server = new McpServer({ name: 'hanactl', version: '0.0.0' });
  register(server);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(withLeanToolList(serverSide));
  const client = new Client({ name: 'budget', version: '1.0.0' });
  await client.connect(clientSide);
  const result = await client.listTools();
  await client.close();
  return result;
}

it(`keeps tools/list within ${BUDGET_BYTES} bytes with ${HEADROOM_BYTES} bytes left for detect_project and one more tool`, async () => {
  const state = new SessionState(daemon, {});
  const existing = await listedTools((s) => registerTools(s, daemon, state));
  const all = await listedTools((s) => {
    registerTools(s, daemon, state);
    registerCatalogTools(s, daemon, state);
  });
  const size = JSON.stringify(all).length;
  const share = size - JSON.stringify(existing).length;
  const perTool = all.tools.map((t) => `${t.name}=${JSON.stringify(t).length}`).join(' ');
  if (process.env.HANACTL_PRINT_TOOLS) console.log(JSON.stringify(all.tools.slice(4)));
  console.log(`tools/list: ${size} bytes (${all.tools.length} tools; catalog tools ${share} bytes). ${perTool}`);
  expect(
    all.tools
      .filter((t) => t.name.match(/schemas|tables|describe|routines|explain|sample|search/))
      .every((t) => t.annotations?.readOnlyHint && t.outputSchema),
  ).toBe(true);
  expect(size + HEADROOM_BYTES).toBeLessThanOrEqual(BUDGET_BYTES);
});

it("describes every catalog tool's connection parameter, and takes sample_rows.limit as an integer", async () => {
  const state = new SessionState(daemon, {});
  const { tools } = await listedTools((s) => registerCatalogTools(s, daemon, state));
  const property = (tool: (typeof tools)[number], name: string) =>
    (tool.inputSchema.properties as Record<string, { type?: string; description?: string }> | undefined)?.[name];
  for (const tool of tools) expect(property(tool, 'connection')?.description, tool.name).toMatch(/this call only/);
  expect(property(tools.find((t) => t.name === 'sample_rows') as (typeof tools)[number], 'limit')?.type).toBe('integer');
});

it('leaves curated tools their share of the budget, beside run_query and on a curated-only connection', async () => {
  const state = new SessionState(daemon, {});
  const listed = await listedTools((s) => {
    const { runQuery } = registerTools(s, daemon, state);
    registerCatalogTools(s, daemon, state);
    registerProjectTools(s, state, {} as ProjectContext);
    runQuery.disable();
  });
  const withRunQuery = await listedTools((s) => {
    registerTools(s, daemon, state);
    registerCatalogTools(s, daemon, state);
    registerProjectTools(s, state, {} as ProjectContext);
  });
  const bytes = (list: typeof listed) => JSON.stringify(list).length;
  // The names a curated tool may not take are exactly the tools a session registers.
  expect(withRunQuery.tools.map((t) => t.name).sort()).toEqual([...BUILT_IN_TOOL_NAMES].sort());
  console.log(`built-in tools/list: ${bytes(withRunQuery)} bytes; without run_query ${bytes(listed)}`);
  expect(bytes(withRunQuery) + CURATED_LIST_SHARE.mixed).toBeLessThanOrEqual(BUDGET_BYTES);
  expect(bytes(listed) + CURATED_LIST_SHARE.curatedOnly).toBeLessThanOrEqual(BUDGET_BYTES);
});
