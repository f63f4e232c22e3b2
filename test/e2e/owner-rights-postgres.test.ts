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
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY as POLICY, RlsOwnerDatabase } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** Objects a person may have created as the tables' owner (the foreign server and mapping are the superuser's, below). */
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
  // A role with the owner's rights (an inheriting member), whom the owner's exemption covers too.
  const db = new RlsOwnerDatabase('hanactl_owner', { members: ['member'] });
  let scoped: ShimHandle;
  let plain: ShimHandle;

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { customer_id: number }[] }).rows;
  };

  beforeAll(async () => {
    const { agent } = db;
    await db.setUp(
      [
        ...OWNED,
        `GRANT SELECT ON orders, forced, catalogue, order_overview, order_outer, mine, forced_overview, catalogue_view, order_totals, order_totals_via TO ${agent}`,
        `SET ROLE ${db.member('member')}`,
        'CREATE VIEW member_overview AS SELECT customer_id, item FROM orders',
        `GRANT SELECT ON member_overview TO ${agent}`,
      ],
      [
        // Made by the superuser, whom no policy binds.
        'CREATE VIEW admin_overview AS SELECT customer_id, item FROM orders',
        `GRANT SELECT ON admin_overview TO ${agent}`,
        'CREATE EXTENSION postgres_fdw',
        `CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname '${db.name}', host '127.0.0.1')`,
        `CREATE USER MAPPING FOR ${agent} SERVER loopback OPTIONS (user 'postgres', password_required 'false')`,
        "CREATE FOREIGN TABLE orders_archive (customer_id int, item text) SERVER loopback OPTIONS (schema_name 'public', table_name 'orders')",
        `GRANT SELECT ON orders_archive TO ${agent}`,
      ],
    );
    await db.addConnection(home, 'shop', ['--context', 'customer_id']);
    await db.addConnection(home, 'plain');
    scoped = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    plain = await startShim(home.env, ['--connection', 'plain']);
  });

  afterAll(async () => {
    await scoped?.close();
    await plain?.close();
    await home.dispose();
    await db.dispose();
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
