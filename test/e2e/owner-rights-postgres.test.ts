/**
 * Relations that read a table under row-level security with rights other than the caller's, on a
 * connection that separates rows, through the real shim and daemon: a view (not security_invoker)
 * whose owner is the table's owner and so exempt from its policies, a materialized view over the
 * table (its rows were computed once, by its owner), and a postgres_fdw foreign table whose remote
 * session runs as another role and carries none of the call's context values. Each would return
 * every customer's rows; so would a view whose owner FORCE ROW LEVEL SECURITY binds but a policy
 * applies to (to it, to a role it is a member of) and not to the caller, or a restrictive policy
 * limits the caller and not the owner. Where rows are separated they are refused, and a
 * security_invoker view, a view whose owner the policies bind no less than the caller, and a view
 * over a table without row security still answer.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { asPgSuperuser, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY as POLICY, RlsOwnerDatabase, scopedAndPlainShims } from '../helpers/rls-fixture.js';

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

/** A table under FORCE ROW LEVEL SECURITY with the context policy and `policy`, one hidden row, and an owner's view over it. */
const forcedWith = (table: string, policy: string): string[] => [
  `CREATE TABLE ${table} (customer_id int NOT NULL, item text NOT NULL)`,
  `INSERT INTO ${table} VALUES (1, 'mine'), (2, 'hidden-forced'), (1, 'hidden-forced')`,
  `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
  `ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`,
  `CREATE POLICY by_customer ON ${table} USING (${POLICY})`,
  policy,
  `CREATE VIEW ${table}_own AS SELECT customer_id, item FROM ${table}`,
];

describe.skipIf(!available)('owner-rights relations over row security on PostgreSQL', () => {
  // A role with the owner's rights (an inheriting member), whom the owner's exemption covers too.
  const db = new RlsOwnerDatabase('hanactl_owner', { members: ['member'] });
  // A role the owner is a member of, and a role that is neither owner nor superuser: policies name them.
  const group = `${db.name}_group`;
  const admin = `${db.name}_admin`;
  const { scoped, plain } = scopedAndPlainShims({
    async setUp(home) {
      const { agent, owner } = db;
      await asPgSuperuser([`CREATE ROLE ${group}`, `CREATE ROLE ${admin}`]);
      await db.setUp(
        [
          ...OWNED,
          // FORCE binds the owner, but a policy that applies to the owner's roles and not the caller's lets it see more.
          ...forcedWith('forced_open', `CREATE POLICY owner_all ON forced_open TO ${owner} USING (true)`),
          ...forcedWith('forced_group', `CREATE POLICY group_all ON forced_group TO ${group} USING (true)`),
          // A restrictive policy on the caller that does not restrict the owner.
          ...forcedWith(
            'forced_narrow',
            `CREATE POLICY not_hidden ON forced_narrow AS RESTRICTIVE TO ${agent} USING (item <> 'hidden-forced')`,
          ),
          // A policy that applies to the caller and not the owner: the owner sees less, and the view still answers.
          `CREATE POLICY agent_extra ON forced TO ${agent} USING (customer_id = 3)`,
          `GRANT SELECT ON forced_open_own, forced_group_own, forced_narrow_own TO ${agent}`,
          `GRANT SELECT ON forced TO ${admin}`,
          `CREATE POLICY admin_all ON forced TO ${admin} USING (true)`,
          `GRANT SELECT ON orders, forced, catalogue, order_overview, order_outer, mine, forced_overview, catalogue_view, order_totals, order_totals_via TO ${agent}`,
          `SET ROLE ${db.member('member')}`,
          'CREATE VIEW member_overview AS SELECT customer_id, item FROM orders',
          `GRANT SELECT ON member_overview TO ${agent}`,
        ],
        [
          `GRANT ${group} TO ${owner}`,
          `GRANT CREATE ON SCHEMA public TO ${admin}`,
          `SET ROLE ${admin}`,
          'CREATE VIEW forced_admin AS SELECT customer_id, item FROM forced',
          `GRANT SELECT ON forced_admin TO ${agent}`,
          'RESET ROLE',
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
      await db.addScopedAndPlain(home);
    },
    async dispose() {
      await db.dispose();
      await asPgSuperuser([`DROP ROLE IF EXISTS ${group}`, `DROP ROLE IF EXISTS ${admin}`], { ignoreErrors: true });
    },
  });

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { customer_id: number }[] }).rows;
  };

  it.each([
    ['SELECT * FROM order_overview', /order_overview.* view .*orders.*its owner's rights/s],
    ['SELECT o.item FROM orders o JOIN order_overview v USING (item)', /order_overview.* view .*orders/s],
    ['SELECT * FROM order_outer', /order_overview.* view .*orders/s],
    ['SELECT * FROM admin_overview', /admin_overview.* view .*orders/s],
    ['SELECT * FROM member_overview', /member_overview.* view .*orders/s],
    ['SELECT * FROM order_totals', /order_totals.* materialized view .*orders/s],
    ['SELECT * FROM order_totals_via', /order_totals_via.* materialized view .*orders/s],
    ['SELECT * FROM orders_archive', /orders_archive.* foreign table/s],
    ['SELECT * FROM forced_open_own', /forced_open_own.* view .*forced_open.*policy owner_all/s],
    ['SELECT * FROM forced_group_own', /forced_group_own.* view .*forced_group.*policy group_all/s],
    ['SELECT * FROM forced_narrow_own', /forced_narrow_own.* view .*forced_narrow.*policy not_hidden/s],
    ['SELECT * FROM forced_admin', /forced_admin.* view .*forced.*policy admin_all/s],
  ])('refuses %s where rows are separated', async (sql, message) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: owner-rights)');
    expect(textOf(result)).not.toMatch(/item-[23]-|hidden-forced/);
  });

  it('says to make the view read as its caller where a policy applies to its owner and not the caller', async () => {
    const text = textOf(await scoped.call('run_query', { sql: 'SELECT * FROM forced_open_own' }));
    expect(text).toContain('ALTER VIEW forced_open_own SET (security_invoker = true)');
    expect(text).not.toMatch(/owner a policy binds/);
  });

  it.each(['order_overview', 'order_totals', 'orders_archive', 'forced_open_own'])(
    'sample_rows refuses %s where rows are separated',
    async (table) => {
      const result = await scoped.call('sample_rows', { schema: 'public', table });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toContain('(rule: owner-rights)');
      expect(textOf(result)).not.toMatch(/item-[23]-/);
    },
  );

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
