import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3-multiple-ciphers';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceBroker } from '../../../daemon/mcp/service-broker.js';
import { CLIENT_HEADER } from '../../../shared/client-header.js';
import { registerCatalogTools } from '../../../shim/catalog-tools.js';
import { SessionState } from '../../../shim/session-state.js';
import { registerTools } from '../../../shim/tools.js';
import { type InProcessDaemon, inProcessDaemon, request } from '../../helpers/in-process-daemon.js';
import { tempFolders } from '../../helpers/temp-dir.js';
import { createSqliteFixture } from './sqlite-fixture.js';

/**
 * The whole path in one process: MCP client -> catalog tools -> the daemon's services, as the
 * composition root wires them for MCP sessions -> SQLite files. The API route is tested below.
 */
const dir = tempFolders('hanactl-catalog-tools-').folder();
let graph: InProcessDaemon;
let app: Hono;
let daemon: ServiceBroker;
let client: Client;

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

beforeAll(async () => {
  graph = await inProcessDaemon(dir);
  const files = createSqliteFixture(dir);
  const long = new Database(join(dir, 'long.db'));
  long.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, '${'x'.repeat(5000)}');`);
  long.close();
  // A view scoped by the caller's context value, as a DBA would write one (mcp_context is hanactl's SQLite function).
  const scoped = new Database(join(dir, 'scoped.db'));
  scoped.exec(`CREATE TABLE orders (customer_id INTEGER, order_no INTEGER);
    INSERT INTO orders VALUES (1, 1), (1, 2), (2, 1);
    CREATE VIEW my_orders AS SELECT * FROM orders WHERE customer_id = CAST(mcp_context('CUSTOMER_ID') AS INTEGER);`);
  scoped.close();
  await graph.connections.add({ name: 'lite', url: `sqlite:${files.file}` });
  await graph.connections.add({ name: 'lite-big', url: `sqlite:${files.bigFile}` });
  await graph.connections.add({ name: 'lite-long', url: `sqlite:${join(dir, 'long.db')}` });
  await graph.connections.add({ name: 'lite-scoped', url: `sqlite:${join(dir, 'scoped.db')}`, context: ['CUSTOMER_ID'] });
  app = graph.app;
  // The services as the composition root hands them to MCP sessions.
  daemon = new ServiceBroker(graph);
  client = await sessionClient(new SessionState(daemon, { connection: 'lite' }));
  // Caches each tool's outputSchema: from here on the SDK client checks every structuredContent against it.
  await client.listTools();
});

/** An MCP client of one session with `state` (context values come from the shim's configuration). */
async function sessionClient(state: SessionState): Promise<Client> {
  const server = new McpServer({ name: 'hanactl', version: '0.0.0' });
  registerTools(server, daemon, state);
  registerCatalogTools(server, daemon, state);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const session = new Client({ name: 'catalog-test', version: '1.0.0' });
  await session.connect(clientSide);
  return session;
}

afterAll(async () => {
  await client?.close();
  await graph?.close();
});

describe('catalog tools on the daemon services', () => {
  it('list_schemas and list_tables answer a compact table plus structuredContent', async () => {
    const schemas = await call('list_schemas');
    expect(schemas.isError).toBeFalsy();
    expect(textOf(schemas)).toMatch(/main\s+\| \*/);
    expect(schemas.structuredContent).toEqual({ current: 'main', schemas: ['main'], truncated: false });
    const tables = await call('list_tables', { pattern: 'order' });
    expect(textOf(tables)).toMatch(
      /^Schema "main": 3 tables and views\.\nRows from the database follow between <(data-[0-9a-f]{16})>.*\n<\1>\nname\s+\| kind[\s\S]*\n<\/\1>$/,
    );
    expect(tables.structuredContent).toMatchObject({
      schema: 'main',
      truncated: false,
      tables: expect.arrayContaining([expect.objectContaining({ name: 'orders' })]),
    });
  });

  it('says how many more exist and how to narrow when a list is capped, on an overriding connection', async () => {
    const big = await call('list_tables', { connection: 'lite-big' });
    expect(textOf(big)).toContain('200 of 2000 tables and views shown. Narrow with pattern');
    expect(big.structuredContent).toMatchObject({ truncated: true });
    expect((big.structuredContent as { tables: unknown[] }).tables).toHaveLength(200);
    const found = await call('search_objects', { pattern: 't1', connection: 'lite-big' });
    expect(textOf(found)).toMatch(/^200 of \d+ matches shown/);
  });

  it('describe_table shows columns, keys and indexes', async () => {
    const r = await call('describe_table', { table: 'order_lines' });
    const text = textOf(r);
    expect(text).toContain('main.order_lines (table)');
    expect(text).toContain('Primary key: (customer_id, order_no, line_no)');
    expect(text).toContain('Foreign key fk_0: (customer_id, order_no) -> main.orders (customer_id, order_no)');
    expect(text).toContain('Index order_lines_qty_idx: (qty)');
    expect(r.structuredContent).toMatchObject({ table: 'order_lines', primaryKey: ['customer_id', 'order_no', 'line_no'] });
  });

  it('sample_rows cuts long cells with a marker and says when more rows exist', async () => {
    const long = await call('sample_rows', { table: 'notes', connection: 'lite-long' });
    // The daemon cuts the cell once; the text and the structured rows carry the same cut.
    const body = (long.structuredContent as { rows: { body: string }[] }).rows[0]?.body;
    expect(body).toBe(`${'x'.repeat(512)}…[cut]`);
    expect(textOf(long)).toContain(body);
    const two = await call('sample_rows', { table: 'customers', limit: 2 });
    expect(textOf(two)).toMatch(/^2 rows of main\.customers; more exist/);
  });

  it('list_routines, explain_query and search_objects answer readable text', async () => {
    expect(textOf(await call('list_routines'))).toBe('SQLite has no stored procedures or functions.');
    const plan = await call('explain_query', { sql: 'SELECT * FROM orders WHERE customer_id = 1' });
    expect(textOf(plan)).toMatch(/^Plan \(sqlite, estimated, not run\):\n.*\n<data-[0-9a-f]{16}>\nSEARCH orders/);
    const found = await call('search_objects', { pattern: 'odd', kinds: ['column'] });
    expect(textOf(found)).toContain('main.Mixed Case.Odd"Name');
  });

  it('fails with isError results the agent can act on', async () => {
    const missing = await call('describe_table', { table: 'nope' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(
      /^NOT_FOUND: No table or view "nope" in schema "main"\. Find names with list_tables or search_objects\./,
    );
    const write = await call('explain_query', { sql: 'DELETE FROM canary' });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toMatch(/^STATEMENT_REFUSED/);
    const bad = await call('sample_rows', { table: 'customers', limit: 1000 });
    expect(textOf(bad)).toMatch(/^INVALID_REQUEST: .*limit/);
    const ghost = await call('list_tables', { connection: 'ghost' });
    expect(textOf(ghost)).toMatch(/^CONNECTION_NOT_FOUND/);
  });

  it("sends the session's context values, so a scoped view shows only the caller's rows", async () => {
    const scoped = await sessionClient(new SessionState(daemon, { connection: 'lite-scoped', context: { CUSTOMER_ID: '1' } }));
    const mine = await scoped.callTool({ name: 'sample_rows', arguments: { table: 'my_orders' } });
    await scoped.close();
    expect(mine.structuredContent).toMatchObject({ rowCount: 2, rows: [{ customer_id: 1 }, { customer_id: 1 }] });
    await expect(graph.catalog.sample({ connection: 'lite-scoped', table: 'my_orders' })).rejects.toMatchObject({
      code: 'CONTEXT_INVALID',
    });
    const other = await graph.catalog.sample({ connection: 'lite-scoped', table: 'my_orders', context: { CUSTOMER_ID: '2' } });
    expect(other.rows).toEqual([{ customer_id: 2, order_no: 1 }]);
  });

  it('counts catalog calls in the session table', async () => {
    expect(graph.sessions.list().some((s) => s.calls > 0)).toBe(true);
  });
});

describe('POST /v1/catalog/:op', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = { [CLIENT_HEADER]: 'test' }) =>
    request(app, 'POST', path, JSON.stringify(body), headers);

  it('answers an operation, validates bodies and refuses unknown operations', async () => {
    expect((await post('/v1/catalog/tables', { connection: 'lite' })).status).toBe(200);
    const unknown = await post('/v1/catalog/__proto__', { connection: 'lite' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      error: { code: 'NOT_FOUND', message: expect.stringContaining('schemas, tables, describe') },
    });
    const extra = await post('/v1/catalog/describe', { connection: 'lite', table: 't', drop: true });
    expect(extra.status).toBe(400);
    const control = await post('/v1/catalog/describe', { connection: 'lite', table: 'a\u0000b' });
    expect(await control.json()).toMatchObject({ error: { code: 'INVALID_REQUEST', message: expect.stringContaining('table') } });
  });

  it('is behind the client header like every route', async () => {
    expect((await post('/v1/catalog/schemas', { connection: 'lite' }, {})).status).toBe(403);
  });
});
