import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditListSchema, SessionListSchema, StatusSchema } from '../../shared/schemas.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { connectHttp, createToken, type HttpClientHandle, startHttpDaemon } from '../helpers/mcp-http.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

describe('MCP over HTTP from the daemon, on SQLite, with the SDK client', () => {
  const home = new TestHome();
  let base: string;
  let token: string;
  let client: HttpClientHandle;

  beforeAll(async () => {
    ({ base } = await startHttpDaemon(home));
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL); INSERT INTO items VALUES (1, 'alpha'), (2, 'beta');");
    db.close();
    await home.ok(['add', '--no-test', 'shop', `sqlite:${file}`, '--description', 'the shop']);
    await home.ok(['add', '--no-test', 'scoped', `sqlite:${file}`, '--context', 'CUSTOMER_ID,region']);
    token = await createToken(home, 'e2e');
    client = await connectHttp(`${base}/mcp/shop`, token, 'http-editor');
  });

  afterAll(async () => {
    await client?.close();
    await home.dispose();
  });

  it('lists the shim’s tools, less use_connection (the URL fixes the connection)', async () => {
    const names = (await client.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'list_connections',
        'current_connection',
        'run_query',
        'list_schemas',
        'list_tables',
        'describe_table',
        'search_objects',
        'detect_project',
      ]),
    );
    expect(names).not.toContain('use_connection');
    expect(client.client.getServerVersion()?.name).toBe('hanactl');
  });

  it('lists and reads the URL connection’s tables as resources, and refuses another connection’s', async () => {
    const { resources } = await client.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['hanactl://shop/main/items']);
    const { contents } = await client.client.readResource({ uri: 'hanactl://shop/main/items' });
    const text = contents.map((c) => ('text' in c ? c.text : '')).join('\n');
    expect(text).toContain('main.items (table) on connection "shop": 2 columns, row estimate: none');
    expect(text).toContain('Primary key: (id)');
    await expect(client.client.readResource({ uri: 'hanactl://scoped/main/items' })).rejects.toThrow(
      /^MCP error -32602: FORBIDDEN: This session's endpoint fixes the connection "shop"/,
    );
    const { completion } = await client.client.complete({
      ref: { type: 'ref/resource', uri: 'hanactl://{connection}/{schema}/{table}' },
      argument: { name: 'connection', value: '' },
    });
    expect(completion.values).toEqual(['shop']);
  });

  it('offers the URL connection’s curated tools, as a relay session does', async () => {
    const { writeFileSync } = await import('node:fs');
    const file = join(home.dir, 'tools.yaml');
    writeFileSync(
      file,
      'tools:\n  - name: label_of\n    description: The label of one item.\n    sql: SELECT label FROM items WHERE id = :id\n    parameters:\n      - {name: id, type: integer}\n',
    );
    await home.ok(['tools', 'import', 'shop', file]);
    const fresh = await connectHttp(`${base}/mcp/shop`, token, 'http-curated');
    try {
      expect((await fresh.client.listTools()).tools.map((t) => t.name)).toContain('label_of');
      const result = await fresh.call('label_of', { id: 2 });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ label: 'beta' }] });
    } finally {
      await fresh.close();
      await home.ok(['tools', 'remove', 'shop', 'label_of']);
    }
  });

  it('runs run_query on the URL’s connection, rows in structuredContent', async () => {
    const result = await client.call('run_query', { sql: 'SELECT id, label FROM items ORDER BY id' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      rows: [
        { id: 1, label: 'alpha' },
        { id: 2, label: 'beta' },
      ],
      rowCount: 2,
      truncated: false,
    });
  });

  it('runs a catalog tool (describe_table, list_tables)', async () => {
    const described = await client.call('describe_table', { table: 'items' });
    expect(described.isError, textOf(described)).toBeFalsy();
    expect(described.structuredContent).toMatchObject({ table: 'items', columns: [{ name: 'id' }, { name: 'label' }], primaryKey: ['id'] });
    const tables = await client.call('list_tables');
    expect(tables.structuredContent).toMatchObject({ tables: [{ name: 'items' }] });
  });

  it('lists connections with the URL’s one active; refuses a call naming another', async () => {
    const listed = await client.call('list_connections');
    expect(listed.structuredContent).toMatchObject({ active: 'shop' });
    const other = await client.call('run_query', { sql: 'SELECT 1', connection: 'scoped' });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toBe(
      'FORBIDDEN: This session\'s endpoint fixes the connection "shop"; a call cannot use "scoped". Connect to that connection\'s own endpoint instead.',
    );
    expect((await client.call('current_connection')).structuredContent).toMatchObject({ active: 'shop' });
  });

  it('shows the HTTP session in hanactl status and sessions, its calls in the audit trail and the pool figures', async () => {
    const status = StatusSchema.parse(JSON.parse((await home.ok(['status', '--json'])).stdout));
    const session = status.sessions.find((s) => s.client.name === 'http-editor');
    expect(session).toMatchObject({ client: { name: 'http-editor', version: '2.0.0' }, connection: 'shop' });
    expect(session?.pid).toBeUndefined();
    expect(session?.calls).toBeGreaterThanOrEqual(2);
    expect(status.daemon.mcpHttp).toBe(base);
    expect((await home.ok(['status'])).stdout).toMatch(/http-editor 2\.0\.0 .*\| shop/);
    const { sessions } = SessionListSchema.parse(JSON.parse((await home.ok(['sessions', '--json'])).stdout));
    expect(sessions.map((s) => s.id)).toContain(session?.id);

    const { records } = AuditListSchema.parse(JSON.parse((await home.ok(['audit', '--json', '--session', session?.id ?? ''])).stdout));
    expect(records.find((r) => r.statement === 'SELECT id, label FROM items ORDER BY id')).toMatchObject({
      client: 'http-editor',
      clientVersion: '2.0.0',
      connection: 'shop',
      tool: 'run_query',
      outcome: 'ok',
      rows: 2,
    });
    const { pools } = JSON.parse((await home.ok(['pools', '--json'])).stdout) as { pools: { connections: string[]; total: number }[] };
    expect(pools.find((p) => p.connections.includes('shop'))?.total).toBeGreaterThan(0);
  });

  it('ends the session in the table when the client closes it (DELETE)', async () => {
    const short = await connectHttp(`${base}/mcp/shop`, token, 'short-lived');
    await short.call('run_query', { sql: 'SELECT 1 AS one' });
    const before = StatusSchema.parse(JSON.parse((await home.ok(['status', '--json'])).stdout)).sessions;
    expect(before.some((s) => s.client.name === 'short-lived')).toBe(true);
    await short.close();
    const after = StatusSchema.parse(JSON.parse((await home.ok(['status', '--json'])).stdout)).sessions;
    expect(after.some((s) => s.client.name === 'short-lived')).toBe(false);
  });

  it('warns when a new token reaches context values it is not bound to, naming them and the command that binds them', async () => {
    const everywhere = await home.ok(['token', 'create', 'unbound-all']);
    expect(everywhere.stderr).toContain(
      'Warning: "scoped" separates rows by CUSTOMER_ID, REGION, and this token is not bound to them: its holder chooses CUSTOMER_ID, REGION on the URL',
    );
    expect(everywhere.stderr).toContain('`--connection scoped --context CUSTOMER_ID=<value> --context REGION=<value>`');
    expect(everywhere.stderr).not.toContain('"shop" separates');
    const half = await home.ok(['token', 'create', 'unbound-half', '--connection', 'scoped', '--context', 'customer_id=42']);
    expect(half.stderr).toContain('Warning: "scoped" separates rows by REGION, and this token is not bound to it');
    const json = JSON.parse((await home.ok(['token', 'create', 'unbound-json', '--connection', 'scoped', '--json'])).stdout);
    expect(json.unboundContext).toEqual([{ connection: 'scoped', names: ['CUSTOMER_ID', 'REGION'] }]);
    const bound = await home.ok([
      'token',
      'create',
      'bound',
      '--connection',
      'scoped',
      '--context',
      'CUSTOMER_ID=42',
      '--context',
      'REGION=n',
    ]);
    expect(bound.stderr).not.toContain('Warning');
    const plain = await home.ok(['token', 'create', 'plain', '--connection', 'shop']);
    expect(plain.stderr).not.toContain('Warning');
  });

  it('passes the query string’s context values to the database session', async () => {
    const scoped = await connectHttp(`${base}/mcp/scoped?CUSTOMER_ID=42&region=${encodeURIComponent('north & south')}`, token);
    try {
      const result = await scoped.call('run_query', { sql: "SELECT mcp_context('CUSTOMER_ID') AS c, mcp_context('REGION') AS r" });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ c: '42', r: 'north & south' }] });
    } finally {
      await scoped.close();
    }
  });

  /** The refusal an SDK client surfaces when the endpoint answers 400 to initialize. */
  const refusal = async (query: string): Promise<{ status: number | undefined; message: string }> => {
    const error = await connectHttp(`${base}/mcp/scoped?${query}`, token).then(
      async (c) => {
        await c.close();
        throw new Error(`the query string ${query} was accepted`);
      },
      (e: Error & { code?: number }) => e,
    );
    const body = error.message.slice(error.message.indexOf('{'));
    return { status: error.code, message: (JSON.parse(body) as { error: { message: string } }).error.message };
  };

  it.each([
    [
      'an undeclared name',
      'CUSTOMER_ID=1&REGION=n&TENANT=7',
      'The context parameter TENANT is not declared for this connection; declared: CUSTOMER_ID, REGION.',
    ],
    ['a name given twice', 'CUSTOMER_ID=1&REGION=n&CUSTOMER_ID=2', 'The context parameter CUSTOMER_ID is given more than once.'],
    [
      'a name given twice in two spellings',
      'customer_id=1&REGION=n&CUSTOMER_ID=1',
      'The context parameter CUSTOMER_ID is given more than once.',
    ],
    [
      'a declared name missing',
      'CUSTOMER_ID=1',
      "The context parameter REGION is declared for this connection but has no value; add REGION=<value> to the endpoint's query string (/mcp/scoped?REGION=...).",
    ],
    [
      'a declared name empty',
      'CUSTOMER_ID=1&REGION=',
      'The context parameter REGION is empty; an empty value is refused (an engine may store it as NULL).',
    ],
    [
      'a declared name blank',
      'CUSTOMER_ID=%20%20&REGION=n',
      'The context parameter CUSTOMER_ID is empty; an empty value is refused (an engine may store it as NULL).',
    ],
    [
      'a value over the byte limit',
      `CUSTOMER_ID=${encodeURIComponent('é'.repeat(2049))}&REGION=n`,
      'The context parameter CUSTOMER_ID is 4098 bytes long; the limit on this engine is 4096 bytes (values are refused, never truncated).',
    ],
  ])('refuses %s with HTTP 400 before any tool runs, naming the parameter', async (_what, query, sentence) => {
    expect(await refusal(query)).toEqual({ status: 400, message: sentence });
  });

  it('refuses an unknown connection with 404', async () => {
    const error = await connectHttp(`${base}/mcp/nope`, token).catch((e: Error & { code?: number }) => e);
    expect(error).toMatchObject({ code: 404 });
    expect((error as Error).message).toMatch(/There is no connection named \\"nope\\"/);
  });
});
