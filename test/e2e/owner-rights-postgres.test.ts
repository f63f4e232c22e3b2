/**
 * Relations that read a table under row-level security with rights other than the caller's, on a
 * connection that separates rows, through the real shim and daemon: a view (not security_invoker)
 * whose owner is the table's owner and so exempt from its policies, a materialized view over the
 * table (its rows were computed once, by its owner), and a postgres_fdw foreign table whose remote
 * session runs as another role and carries none of the call's context values. Each would return
 * every customer's rows; where rows are separated they are refused, and a security_invoker view,
 * a view whose owner the policies bind (FORCE ROW LEVEL SECURITY), and a view over a table without
 * row security still answer.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_owner_${process.pid}`;
const OWNER = `${TAG}_owner`;
const AGENT = `${TAG}_agent`;
const MEMBER = `${TAG}_member`;
const PASSWORD = randomBytes(12).toString('hex');
const POLICY = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

/** Objects a person may have created as the tables' owner; the foreign server and mapping as the superuser. */
const OWNED = [
  'CREATE TABLE orders (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO orders SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g",
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON orders USING (${POLICY})`,
  'CREATE TABLE forced (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO forced SELECT c, 'f-' || c FROM generate_series(1, 3) c",
  'ALTER TABLE forced ENABLE ROW LEVEL SECURITY',
  'ALTER TABLE forced FORCE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON forced USING (${POLICY})`,
  'CREATE TABLE catalogue (customer_id int, item text)',
  "INSERT INTO catalogue VALUES (2, 'public-2')",
  'CREATE VIEW order_overview AS SELECT customer_id, item FROM orders',
  'CREATE VIEW order_outer WITH (security_invoker) AS SELECT * FROM order_overview',
  'CREATE VIEW mine WITH (security_invoker = true) AS SELECT customer_id, item FROM orders',
  'CREATE VIEW forced_overview AS SELECT customer_id, item FROM forced',
  'CREATE VIEW catalogue_view AS SELECT customer_id, item FROM catalogue',
  'CREATE MATERIALIZED VIEW order_totals AS SELECT customer_id, count(*) AS n FROM orders GROUP BY 1',
  'CREATE MATERIALIZED VIEW order_totals_via AS SELECT customer_id, count(*) AS n FROM mine GROUP BY 1',
];

describe.skipIf(!available)('owner-rights relations over row security on PostgreSQL', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let scoped: ShimHandle;
  let plain: ShimHandle;

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { customer_id: number }[] }).rows;
  };

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${OWNER}`);
      await admin.query(`CREATE ROLE ${AGENT} LOGIN PASSWORD '${PASSWORD}'`);
      // A role with the owner's rights (an inheriting member), whom the owner's exemption covers too.
      await admin.query(`CREATE ROLE ${MEMBER} IN ROLE ${OWNER}`);
    } finally {
      await admin.end();
    }
    scratch = await scratchPgDatabase(TAG, [
      `GRANT CREATE ON SCHEMA public TO ${OWNER}`,
      `SET ROLE ${OWNER}`,
      ...OWNED,
      `GRANT SELECT ON orders, forced, catalogue, order_overview, order_outer, mine, forced_overview, catalogue_view, order_totals, order_totals_via TO ${AGENT}`,
      `SET ROLE ${MEMBER}`,
      'CREATE VIEW member_overview AS SELECT customer_id, item FROM orders',
      `GRANT SELECT ON member_overview TO ${AGENT}`,
      'RESET ROLE',
      // Made by the superuser, whom no policy binds.
      'CREATE VIEW admin_overview AS SELECT customer_id, item FROM orders',
      `GRANT SELECT ON admin_overview TO ${AGENT}`,
      'CREATE EXTENSION postgres_fdw',
      `CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname '${TAG}', host '127.0.0.1')`,
      `CREATE USER MAPPING FOR ${AGENT} SERVER loopback OPTIONS (user 'postgres', password_required 'false')`,
      "CREATE FOREIGN TABLE orders_archive (customer_id int, item text) SERVER loopback OPTIONS (schema_name 'public', table_name 'orders')",
      `GRANT SELECT ON orders_archive TO ${AGENT}`,
    ]);
    const u = new URL(scratch.url);
    const url = `postgres://${AGENT}@${u.host}${u.pathname}`;
    await home.ok(['add', '--no-test', 'shop', url, '--password-stdin', '--context', 'customer_id'], { input: PASSWORD });
    await home.ok(['add', '--no-test', 'plain', url, '--password-stdin'], { input: PASSWORD });
    scoped = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    plain = await startShim(home.env, ['--connection', 'plain']);
  });

  afterAll(async () => {
    await scoped?.close();
    await plain?.close();
    await home.dispose();
    await scratch?.drop();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    for (const role of [AGENT, MEMBER, OWNER]) await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
  });

  it.each([
    ['SELECT * FROM order_overview', /order_overview.* view .*orders.*its owner's rights/s],
    ['SELECT o.item FROM orders o JOIN order_overview v USING (item)', /order_overview.* view .*orders/s],
    ['SELECT * FROM order_outer', /order_overview.* view .*orders/s],
    ['SELECT * FROM admin_overview', /admin_overview.* view .*orders/s],
    ['SELECT * FROM member_overview', /member_overview.* view .*orders/s],
    ['SELECT * FROM order_totals', /order_totals.* materialized view .*orders/s],
    ['SELECT * FROM order_totals_via', /order_totals_via.* materialized view .*orders/s],
    ['SELECT * FROM orders_archive', /orders_archive.* foreign table/s],
  ])('refuses %s where rows are separated', async (sql, message) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: owner-rights)');
    expect(textOf(result)).not.toMatch(/item-[23]-/);
  });

  it.each(['order_overview', 'order_totals', 'orders_archive'])('sample_rows refuses %s where rows are separated', async (table) => {
    const result = await scoped.call('sample_rows', { schema: 'public', table });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: owner-rights)');
    expect(textOf(result)).not.toMatch(/item-[23]-/);
  });

  it('explain_query refuses the view too where rows are separated', async () => {
    const result = await scoped.call('explain_query', { sql: 'SELECT * FROM order_overview' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: owner-rights)');
  });

  it("says what a person can do: the caller's rights on the view, or the policies on its owner", async () => {
    const text = textOf(await scoped.call('run_query', { sql: 'SELECT * FROM order_overview' }));
    expect(text).toMatch(/security_invoker/);
    expect(text).toMatch(/FORCE ROW LEVEL SECURITY/);
  });

  it('answers a security_invoker view, a view whose owner the policies bind, and a view over a table without row security', async () => {
    expect(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM mine' })).map((r) => r.customer_id)).toEqual([1, 1, 1, 1, 1]);
    expect(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM forced_overview' })).map((r) => r.customer_id)).toEqual([1]);
    expect(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM catalogue_view' })).map((r) => r.customer_id)).toEqual([2]);
    expect(rowsOf(await scoped.call('sample_rows', { schema: 'public', table: 'mine' })).map((r) => r.customer_id)).toEqual([
      1, 1, 1, 1, 1,
    ]);
  });

  it('keeps them where no context names are declared (the grant is the person’s to make)', async () => {
    for (const view of ['order_overview', 'admin_overview', 'member_overview'])
      expect(rowsOf(await plain.call('run_query', { sql: `SELECT * FROM ${view}` }))).toHaveLength(15);
    expect(rowsOf(await plain.call('run_query', { sql: 'SELECT * FROM order_totals' }))).toHaveLength(3);
  });
});
